package workqueue

import (
	"context"
	"errors"
	"fmt"
)

// ErrShutDown is what Get returns once the queue is shut down and has no
// key left to hand out. A worker that gets it should return.
var ErrShutDown = errors.New("workqueue: shut down")

// ShutDown stops the queue from accepting work: from now on Add, AddAfter
// and AddRateLimited do nothing, keys still waiting for a delay are
// dropped, and the timer is stopped. Keys already queued are still handed
// out, and a key being processed that was added again is still queued at
// its Done; once none is left, Get returns [ErrShutDown]. ShutDown does
// not wait for any of that; ShutDownWithDrain does. Calling it again does
// nothing.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDownLocked("")
}

// ShutDownWithDrain shuts the queue down like ShutDown, then waits until
// the work is drained: every queued key handed out and Done, and every
// key being processed Done (and, if it was added again, processed once
// more and Done). Workers must keep running meanwhile, or nothing drains.
//
// It returns nil once drained, or ctx.Err() if ctx is done first. Work
// still in flight then continues; nothing is cancelled.
//
// Note what drain does not cover: keys waiting for a delay are dropped,
// and a reconcile that fails during the drain cannot be retried, because
// AddRateLimited is ignored by then.
func (q *Queue[K]) ShutDownWithDrain(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDownLocked("drain")
	return q.waitLocked(ctx, func() bool { return len(q.dirty) == 0 && len(q.processing) == 0 })
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Queue[K]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// shutDownLocked marks the queue shut down, drops the delayed keys, stops
// the timer and wakes every waiter. The caller holds q.mu. how is "" or
// "drain", for the trace.
func (q *Queue[K]) shutDownLocked(how string) {
	if q.shuttingDown {
		return
	}
	q.shuttingDown = true
	dropped := len(q.waiting)
	q.disarm()
	q.waiting = nil
	clear(q.waitingByKey)
	if q.trace != nil {
		detail := fmt.Sprintf("%d queued, %d processing, %d delayed dropped",
			len(q.queue), len(q.processing), dropped)
		if how != "" {
			detail = how + ": " + detail
		}
		q.emitQueue(KindShutDown, detail)
	}
	q.cond.Broadcast()
}

// finished reports whether Get has nothing left to hand out, ever: the
// queue is shut down and no key is dirty, so none is queued and none will
// be queued at a Done. The caller holds q.mu.
func (q *Queue[K]) finished() bool {
	return q.shuttingDown && len(q.dirty) == 0
}
