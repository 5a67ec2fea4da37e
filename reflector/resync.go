package reflector

import (
	"context"
	"time"
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

// doResync calls the store's Resync, once the store holds a whole list,
// then arms the next tick.
func (r *Reflector[T]) doResync() {
	defer r.armResync()
	if !r.synced {
		return
	}
	r.emit(KindResync, "", "", "")
	if err := r.store.Resync(); err != nil {
		r.report(&Error{Op: KindResync, Name: r.opts.Name, Err: err})
	}
}

// armResync schedules the next resync tick ResyncPeriod from now. It is
// armed again only once a tick has been handled (doResync), so the period
// runs from the end of one resync to the next, as client-go's does: a tick
// handled late never makes a handler whose period equals it miss a whole
// period. Only Run's goroutine calls it. The tick goes to this Run's
// channel, taken now: a timer that fired as Run returned may run its
// function after the next Run made its own, which it must neither read
// nor tick (TestAResyncTickOfAFinishedRunDoesNotReachTheNextRun).
func (r *Reflector[T]) armResync() {
	tick := r.resync
	r.resyncTimer = r.opts.Clock.AfterFunc(r.opts.ResyncPeriod, func() {
		select {
		case tick <- struct{}{}:
		default: // a tick is already waiting
		}
	})
}
