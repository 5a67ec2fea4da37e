package readyourwrites

import (
	"sync"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// written is, per object key, the resourceVersions of the writes a Cache
// recorded that its informer has not applied yet (comparable
// resourceVersions only), whether or not the guard still waits for them
// (a key run stale past MaxHold drops its records, not these). A delete
// of the key recorded meanwhile is seen only once the cache has applied
// the newest of them: until then, the object's absence from the cache
// may be its create not arrived yet, not its delete
// (TestADeleteRecordedBeforeItsObjectsCreateReachedTheCacheStillHoldsTheKey,
// TestADeleteAfterItsCreateRanStaleStillWaitsForTheCreate).
//
// Its memory follows the writes the informer has not applied: a key's
// applied versions go when the key is next asked about, and every key's
// at a sweep once the versions kept have doubled since the last (at 128
// at least), as the guard sweeps its records.
type written struct {
	mu    sync.Mutex
	rvs   map[informer.Key][]string // guarded by mu; a key is absent when it has none
	n     int                       // guarded by mu; the versions in rvs
	swept int                       // guarded by mu; n after the last sweep
}

// add notes a write of key at rv; applied reports whether the informer
// has applied a version.
func (w *written) add(key informer.Key, rv string, applied func(string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rvs == nil {
		w.rvs = map[informer.Key][]string{}
	}
	w.rvs[key] = append(w.rvs[key], rv)
	w.n++
	if w.n >= 128 && w.n >= 2*w.swept {
		for k := range w.rvs {
			w.pruneLocked(k, applied)
		}
		w.swept = w.n
	}
}

// newest is the newest version of key's writes the informer has not
// applied, or "" if it has applied them all.
func (w *written) newest(key informer.Key, applied func(string) bool) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pruneLocked(key, applied)
	newest := ""
	for _, rv := range w.rvs[key] {
		if c, err := si.CompareResourceVersions(rv, newest); newest == "" || err == nil && c > 0 {
			newest = rv
		}
	}
	return newest
}

// pruneLocked forgets key's applied versions. The caller holds mu.
func (w *written) pruneLocked(key informer.Key, applied func(string) bool) {
	rvs := w.rvs[key]
	kept := rvs[:0]
	for _, rv := range rvs {
		if !applied(rv) {
			kept = append(kept, rv)
		}
	}
	w.n -= len(rvs) - len(kept)
	if len(kept) == 0 {
		delete(w.rvs, key)
	} else {
		w.rvs[key] = kept
	}
}
