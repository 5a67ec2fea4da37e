package deltafifo

import "github.com/listwatch/informer"

// LastKnown returns the newest state of key on this side of the API
// server: its newest queued delta's object if a delta is queued (newer
// than the cache), else KnownObjects' copy. It reports false if neither
// has the key, or if the newest queued delta is a deletion: then the
// object is gone. Cost: O(1).
func (f *DeltaFIFO[T]) LastKnown(key informer.Key) (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.items[key]; ok && q.deltas.Newest().Type == Deleted {
		var zero T
		return zero, false
	}
	return f.lastKnownLocked(key)
}
