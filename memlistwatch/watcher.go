package memlistwatch

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one open watch. Writes queue events on it while holding the
// collection's lock, so the queue is unbounded: a slow reader must never
// block a writer. Its own goroutine (run) moves events from the queue to
// ResultChan and closes ResultChan when the watch ends.
type watcher struct {
	bookmarks bool             // the client allowed BOOKMARK events
	result    chan watch.Event // ResultChan; closed by run, and only by run
	done      chan struct{}    // closed by Stop: the watch ends now, queue or not
	stopOnce  sync.Once        // makes Stop idempotent
	forget    func(w *watcher) // removes w from its collection; called by Stop
	wake      chan struct{}    // capacity 1: the queue or ending changed
	mu        sync.Mutex       // guards queue and ending
	queue     []watch.Event    // events not yet received, oldest first
	ending    bool             // end once the queue is drained (after a 410)
}

func newWatcher(bookmarks bool, forget func(w *watcher)) *watcher {
	return &watcher{
		bookmarks: bookmarks,
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
		forget:    forget,
		wake:      make(chan struct{}, 1),
	}
}

// ResultChan implements watch.Interface: the events, closed when the watch
// ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it ends the watch at once. It is safe to
// call more than once and from any goroutine.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.forget(w)
	})
}

// push queues a copy of ev and reports whether it did: after Stop or
// finish the watch takes no more events.
func (w *watcher) push(ev watch.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.done:
		return false
	default:
	}
	if w.ending {
		return false
	}
	ev.Object = ev.Object.DeepCopyObject()
	w.queue = append(w.queue, ev)
	w.signal()
	return true
}

// finish makes the watch end once the events already queued are received,
// as the server ends a watch after sending an ERROR event.
func (w *watcher) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ending = true
	w.signal()
}

func (w *watcher) finishing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ending
}

// signal wakes run without blocking. Callers hold mu.
func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// pop takes the oldest queued event. ok is false when the queue is empty;
// ending then says whether the watch should end.
func (w *watcher) pop() (ev watch.Event, ok, ending bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return watch.Event{}, false, w.ending
	}
	ev = w.queue[0]
	w.queue[0] = watch.Event{} // let the copy be collected once received
	w.queue = w.queue[1:]
	return ev, true, false
}

// run delivers queued events until the watch ends: on Stop, when ctx ends,
// when timeout (if > 0) passes, or after a finish once the queue drains.
func (w *watcher) run(ctx context.Context, timeout time.Duration) {
	defer close(w.result)
	defer w.Stop()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		ev, ok, ending := w.pop()
		if !ok {
			if ending {
				return
			}
			select {
			case <-w.wake:
				continue
			case <-w.done:
			case <-ctx.Done():
			case <-expired:
			}
			return
		}
		select {
		case w.result <- ev:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		case <-expired:
			return
		}
	}
}
