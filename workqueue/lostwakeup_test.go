package workqueue

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// slowCtx is a Context that package context does not know, so that
// context.AfterFunc watches it from a goroutine of its own; once it is
// done, Err waits until release is closed. That holds the watcher (which
// calls Err before it runs the AfterFunc) and the woken Get (which calls
// Err after it stopped the AfterFunc) at fixed points, so that the
// order a slow scheduler gives them is the order every run gets. With a
// plain context.WithCancel the same window lies between cancel's store
// of Err and its cancel of the ctx's children: hammered, about one
// round in a thousand loses the wake-up.
type slowCtx struct {
	done, release chan struct{}
	mu            sync.Mutex
	err           error
}

func newSlowCtx() *slowCtx {
	return &slowCtx{done: make(chan struct{}), release: make(chan struct{})}
}

func (c *slowCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *slowCtx) Done() <-chan struct{}       { return c.done }
func (c *slowCtx) Value(any) any               { return nil }
func (c *slowCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		<-c.release
	}
	return err
}
func (c *slowCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.done)
	c.err = context.Canceled
}

// Two workers wait in Get, the first under a context that ends as a key
// arrives (a leader's term ending as a new leader's Run waits on the same
// queue, a Run whose ctx ends beside another Run). The key's Signal wakes
// the first; it leaves the key queued since its ctx is done
// (TestRunStartsNoReconcileOnceItsContextIsDone), and returns, stopping
// its ctx's AfterFunc before that ever ran. The comment in Get says "no
// wake-up is lost: ctx's end wakes every waiting Get", but the broadcast
// is the AfterFunc's, and a stopped AfterFunc never runs: the second
// worker, whose ctx is live, sleeps beside a queued key until the next
// Add. Before 0e5bf8d the first worker took the key.
func TestAKeyLeftQueuedByAGetWhoseContextEndedGoesToAGetWithALiveContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		ending := newSlowCtx()
		first := make(chan error, 1)
		go func() { _, err := q.Get(ending); first <- err }()
		synctest.Wait() // the first Get waits, first in line for a Signal

		live, cancel := context.WithCancel(t.Context())
		defer cancel()
		second := make(chan string, 1)
		go func() {
			if key, err := q.Get(live); err == nil {
				second <- key
			}
		}()
		synctest.Wait() // the second waits behind it

		ending.cancel()
		q.Add("a")
		synctest.Wait() // the first Get and ctx's watcher both at Err
		close(ending.release)
		err := <-first
		synctest.Wait()

		assert.ErrorIs(t, err, context.Canceled, "the first Get's ctx ended")
		select {
		case key := <-second:
			assert.Equal(t, "a", key)
		default:
			assert.Fail(t, "a key is queued and a Get with a live ctx still waits",
				"queued: %d", q.Len())
		}
		cancel()
		synctest.Wait()
	})
}
