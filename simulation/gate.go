package simulation

import (
	"context"
	"sync"
	"time"

	informer "github.com/listwatch/informer"
)

// gate is a replica's pause switch: while it is closed the replica's
// requests wait before they reach the server, its timers wait before
// they fire, and its reconciles wait where they are, as a SIGSTOPped
// process's do. Its wall clock (Now) runs on: after a resume the
// replica finds its deadlines past, as a resumed process does.
type gate struct {
	mu     sync.Mutex
	paused chan struct{} // guarded by mu; non-nil while paused, closed at resume
}

func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused == nil {
		g.paused = make(chan struct{})
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused != nil {
		close(g.paused)
		g.paused = nil
	}
}

// isPaused reports whether the gate is closed now.
func (g *gate) isPaused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused != nil
}

// wait returns at once if the gate is open, else at the resume or when
// ctx ends, and reports whether ctx is still going.
func (g *gate) wait(ctx context.Context) bool {
	g.mu.Lock()
	ch := g.paused
	g.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}

// slotClock is the replica's informer.Clock: the bubble's time at the
// slot's rate, and timers that fire only once the gate is open.
type slotClock struct {
	g *gate
	r *rate
}

func (c slotClock) Now() time.Time { return c.r.now() }

func (c slotClock) AfterFunc(d time.Duration, f func()) informer.Timer {
	return time.AfterFunc(c.r.real(d), func() {
		c.g.wait(context.Background())
		f()
	})
}
