package workqueue

import "sync"

// keptRetries counts, per key, the failures Run retried because they
// were marked KeepRetrying, since the key last succeeded or was given up
// on. RunOptions.MaxRetries caps the others only: a key whose marked
// failures are through still has its own retries
// (TestRetriesMarkedKeepRetryingLeaveAKeyItsOwnMaxRetries).
type keptRetries[K comparable] struct {
	mu    sync.Mutex
	count map[K]int // guarded by mu; a key is absent when it has none
}

// add counts one kept retry of key.
func (k *keptRetries[K]) add(key K) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.count == nil {
		k.count = map[K]int{}
	}
	k.count[key]++
}

// of is key's kept retries.
func (k *keptRetries[K]) of(key K) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count[key]
}

// forget clears key's count: it succeeded, or was given up on.
func (k *keptRetries[K]) forget(key K) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.count, key)
}
