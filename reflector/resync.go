package reflector

import (
	"context"
	"sync"
	"time"

	"github.com/listwatch/informer"
)

// Resync runs on Run's goroutine, between other work: while a watch is
// open (watch), while waiting out a backoff (pause), never during a LIST
// or a streaming list, whose tick waits for the next select. So the store
// is never called from two goroutines at once.

// pause waits d, or until ctx ends, resyncing on time meanwhile.
func (r *Reflector[T]) pause(ctx context.Context, d time.Duration) {
	if r.trace != nil {
		r.emit(KindBackoff, "", "", d.Round(time.Millisecond).String())
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-r.resync:
			r.doResync()
		}
	}
}

// doResync calls the store's Resync, once the store holds a whole list.
func (r *Reflector[T]) doResync() {
	if !r.synced {
		return
	}
	r.emit(KindResync, "", "", "")
	if err := r.store.Resync(); err != nil {
		r.report(&Error{Op: KindResync, Name: r.opts.Name, Err: err})
	}
}

// tickEvery sends the clock's time on the returned channel every d until
// stop is called. Like time.Ticker it drops a tick its reader is not
// ready for. It is a Ticker built on Clock.AfterFunc, so that a fake
// clock drives resyncs in tests.
func tickEvery(c informer.Clock, d time.Duration) (ticks <-chan time.Time, stop func()) {
	ch := make(chan time.Time, 1)
	var mu sync.Mutex
	var timer informer.Timer
	stopped := false
	var arm func()
	arm = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		timer = c.AfterFunc(d, func() {
			select {
			case ch <- c.Now():
			default: // the reader is busy: drop this tick
			}
			arm()
		})
	}
	arm()
	return ch, func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		timer.Stop()
	}
}
