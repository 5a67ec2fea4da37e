package workqueue

import "context"

// waitLocked blocks until ready() holds or ctx is done. It returns nil if
// ready() holds, and ctx.Err() otherwise. The caller holds q.mu, and ready
// is only ever evaluated with it held.
//
// This is the sync.Cond wait loop, the same shape as a FIFO's Pop:
//
//	for !ready() { q.cond.Wait() }
//
// Wait releases q.mu while the goroutine sleeps and takes it again before
// returning, so the condition is always tested under the lock. The loop
// tests it again after every wake-up because a wake-up means only
// "something changed", not "your condition holds": another worker may have
// taken the key first.
//
// A sync.Cond cannot wait on a channel, so ctx joins in through
// context.AfterFunc: when ctx is done, a function takes q.mu and
// broadcasts, waking every waiter to test its own ctx. Taking q.mu before
// Broadcast matters: without it the broadcast could fall between a
// waiter's test of ctx.Err() and its Wait, and be lost.
func (q *Queue[K]) waitLocked(ctx context.Context, ready func() bool) error {
	if ready() {
		return nil // the common case costs no AfterFunc
	}
	if ctx.Done() != nil { // a context that can never be done needs no hook
		stop := context.AfterFunc(ctx, func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.cond.Broadcast()
		})
		defer stop() // stop does not wait for the function, so holding q.mu here is safe
	}
	for !ready() && ctx.Err() == nil {
		q.cond.Wait()
	}
	if ready() {
		return nil
	}
	return ctx.Err()
}
