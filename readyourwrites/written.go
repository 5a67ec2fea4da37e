package readyourwrites

import (
	"slices"
	"sync"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// written is, per object key, the resourceVersions of the writes a Cache
// recorded that the guard still waits for (comparable resourceVersions
// only). A delete of the key recorded meanwhile is seen only once the
// cache has applied the newest of them: until then, the object's absence
// from the cache may be its create not arrived yet, not its delete
// (TestADeleteRecordedBeforeItsObjectsCreateReachedTheCacheStillHoldsTheKey).
type written struct {
	mu  sync.Mutex
	rvs map[informer.Key][]string // guarded by mu; a key is absent when it has none
}

// add notes a write of key at rv, and returns what forgets it, to be
// called when the guard drops the write's record.
func (w *written) add(key informer.Key, rv string) (drop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rvs == nil {
		w.rvs = map[informer.Key][]string{}
	}
	w.rvs[key] = append(w.rvs[key], rv)
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		rvs := w.rvs[key]
		if i := slices.Index(rvs, rv); i >= 0 {
			rvs = slices.Delete(rvs, i, i+1)
		}
		if len(rvs) == 0 {
			delete(w.rvs, key)
		} else {
			w.rvs[key] = rvs
		}
	}
}

// newest is the newest resourceVersion of key's writes still waited
// for, or "" if none is.
func (w *written) newest(key informer.Key) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	newest := ""
	for _, rv := range w.rvs[key] {
		if c, err := si.CompareResourceVersions(rv, newest); newest == "" || err == nil && c > 0 {
			newest = rv
		}
	}
	return newest
}
