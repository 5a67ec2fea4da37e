package fakeapiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// watcher is one open watch. Writes queue events on it while holding the
// server's lock, so its queue is unbounded: a slow reader never blocks a
// writer. The request's goroutine (serveWatch) drains the queue to the
// connection. Its counterpart in memlistwatch is that package's watcher.
type watcher struct {
	gr     schema.GroupResource // the resource watched
	filter filter               // namespace and selectors
	// bookmarks: the client allowed BOOKMARK events.
	bookmarks bool

	wake    chan struct{} // capacity 1: the queue changed, or the watch ends
	done    chan struct{} // closed by cut: end now, queue or not
	cutOnce sync.Once

	// startRV is the resourceVersion the watch started from (the state's,
	// for one that starts with the current state). Set before the watch
	// is registered, then only read. A periodic bookmark is sent only
	// when the server has moved past it, as the watch cache does.
	startRV int64

	mu     sync.Mutex  // guards queue and ending
	queue  []watchItem // events not yet written, oldest first
	ending bool        // end once the queue is written (after an ERROR)
}

// watchItem is one event to send: an object's event, a BOOKMARK (obj has
// only a resourceVersion and maybe annotations) or an ERROR (status).
type watchItem struct {
	typ    string
	obj    *unstructured.Unstructured
	status error
}

func newWatcher(gr schema.GroupResource, f filter, bookmarks bool) *watcher {
	return &watcher{gr: gr, filter: f, bookmarks: bookmarks, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// offer queues the event change c makes for this watch, if any: with
// selectors, an object that starts matching is ADDED and one that stops
// is DELETED (its previous state, at c's resourceVersion), as
// kube-apiserver sends them. A write at or before startRV is none of
// its business: a watch from a resourceVersion not yet reached gets
// only the writes after it, as the watch cache sends them
// (TestConformanceWatchFromAResourceVersionNotYetReached). Called with
// the server's lock held.
func (w *watcher) offer(c change) {
	if c.gr != w.gr || c.rv <= w.startRV {
		return
	}
	now := w.filter.matches(c.obj)
	before := c.typ == modified && w.filter.matches(c.prev)
	switch {
	case c.typ == modified && before && !now:
		prev := c.prev.DeepCopy()
		prev.SetResourceVersion(c.obj.GetResourceVersion())
		w.push(watchItem{typ: deleted, obj: prev})
	case c.typ == modified && !before && now:
		w.push(watchItem{typ: added, obj: c.obj})
	case now:
		w.push(watchItem{typ: c.typ, obj: c.obj})
	}
}

func (w *watcher) push(it watchItem) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ending {
		return
	}
	w.queue = append(w.queue, it)
	w.signal()
}

// bookmark queues a BOOKMARK at resourceVersion rv if that is newer than
// where the watch started, as the watch cache sends one only then.
func (w *watcher) bookmark(rv int64) {
	if rv > w.startRV {
		w.push(watchItem{typ: bookmark, obj: bookmarkObject(rv, false)})
	}
}

// fail queues an ERROR event and ends the watch once it is written.
func (w *watcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ending {
		return
	}
	w.queue = append(w.queue, watchItem{typ: errorEv, status: err})
	w.ending = true
	w.signal()
}

// finish ends the watch once the events already queued are written, as
// the server ends watches on storage it tears down.
func (w *watcher) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ending = true
	w.signal()
}

// signal wakes the writer without blocking. Callers hold mu.
func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take returns the queued events and whether the watch ends after them.
func (w *watcher) take() ([]watchItem, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q, w.ending
}

// cut ends the watch at once, as a broken connection does: events not yet
// written are lost.
func (w *watcher) cut() {
	w.cutOnce.Do(func() { close(w.done) })
}
