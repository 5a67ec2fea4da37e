package sharding

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
)

// inFlight is what a Reconciler is working on, in any worker: each call
// in progress, its key, the objects that key held when the call began,
// and whether the call may still be reconciling them. A drain is
// acknowledged only once no other call may be reconciling its object
// (waitFor).
//
// A member may reconcile an object under a key that is no longer the
// object's: a child under its parent's key, orphaned or given another
// parent while that reconcile runs (its ring key changes, the sharder
// drains it, and the member would acknowledge it under its new key);
// or an object under its own key, adopted meanwhile
// (TestAChildOrphanedWhileItsParentsKeyIsReconciledDoesNotReachAnotherMemberMidReconcile,
// TestAChildReparentedWhileItsOldParentsKeyIsReconciledDoesNotReachTheNewParentsMemberMidReconcile,
// TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo).
// A call that begins later reads a cache in which the object is already
// drained, so only calls in progress can hold a drain back. A call waits
// only once it has stopped reconciling (reconciled), and waits only for
// calls still reconciling, so no two calls wait for each other.
type inFlight struct {
	mu    sync.Mutex
	calls map[*call]struct{} // guarded by mu
}

// call is one call of a Reconciler in progress.
type call struct {
	key         informer.Key
	holds       map[types.UID]bool // guarded by inFlight.mu: the objects key held as the call began
	reconciling bool               // guarded by inFlight.mu: it may still touch what it holds
	done        chan struct{}      // closed once it is not reconciling
	cache       cacheBudget        // its waits for the cache after 409s; the call's own goroutine alone uses it
}

// enter records a call of key, reconciling until reconciled or leave is
// called.
func (f *inFlight) enter(key informer.Key) (c *call, leave func()) {
	c = &call{key: key, reconciling: true, done: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[*call]struct{}{}
	}
	f.calls[c] = struct{}{}
	return c, func() {
		f.reconciled(c)
		f.mu.Lock()
		delete(f.calls, c)
		f.mu.Unlock()
	}
}

// hold records that c's key held obj as c began: the object at the key,
// or one whose ring key it is (a child, reconciled under its parent's
// key by a member that keys by ring key).
func (f *inFlight) hold(c *call, obj metav1.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.holds == nil {
		c.holds = map[types.UID]bool{}
	}
	c.holds[obj.GetUID()] = true
}

// reconciled says c touches nothing any more: its reconcile returned,
// or it calls none.
func (f *inFlight) reconciled(c *call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.reconciling {
		c.reconciling = false
		close(c.done)
	}
}

// waitFor waits until no call but c may be reconciling obj: one of its
// own key, of its ring key, or of a key that held it as that call began.
// It fails only when ctx ends.
func (f *inFlight) waitFor(ctx context.Context, c *call, obj metav1.Object) error {
	own, ring := informer.KeyFor(obj), ringKeyOf(obj)
	for {
		f.mu.Lock()
		var busy chan struct{}
		for other := range f.calls {
			if other != c && other.reconciling && (other.key == own || other.key == ring || other.holds[obj.GetUID()]) {
				busy = other.done
				break
			}
		}
		f.mu.Unlock()
		if busy == nil {
			return nil
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ringKeyOf is RingKey(obj) as a Key.
func ringKeyOf(obj metav1.Object) informer.Key {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return informer.Key{Namespace: obj.GetNamespace(), Name: ref.Name}
	}
	return informer.KeyFor(obj)
}
