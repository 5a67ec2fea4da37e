package main

import (
	"sync"
	"time"

	"github.com/listwatch/informer"
)

// tally keeps the score of one run: when each Cluster was first
// converged, and how many reconciles ran and how many calls they made.
type tally struct {
	want  int           // Clusters to converge
	start time.Time     // the controller started
	all   chan struct{} // closed when every Cluster has converged once
	onOne func()        // called once per Cluster converged: the progress bar

	mu         sync.Mutex // guards the fields below
	syncedAt   time.Time
	done       map[informer.Key]time.Time // first convergence of each Cluster
	doneAt     time.Time                  // the last of them
	reconciles int                        // reconciles run
	calls      int                        // their API calls
	firstCalls int                        // calls of the reconciles that first converged a Cluster
	maxCalls   int                        // most calls any one reconcile made
	busy       time.Duration              // total time spent in reconciles
	failures   int
	lastErr    error
}

func newTally(want int, onOne func()) *tally {
	return &tally{want: want, start: time.Now(), all: make(chan struct{}), onOne: onOne, done: map[informer.Key]time.Time{}}
}

func (t *tally) synced() {
	t.mu.Lock()
	t.syncedAt = time.Now()
	t.mu.Unlock()
}

func (t *tally) failed(err error) {
	t.mu.Lock()
	t.failures++
	t.lastErr = err
	t.mu.Unlock()
}

// reconciled records one reconcile: its calls, its duration, and whether
// it left key converged.
func (t *tally) reconciled(key informer.Key, calls int, converged bool, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reconciles++
	t.calls += calls
	t.maxCalls = max(t.maxCalls, calls)
	t.busy += took
	if !converged {
		return
	}
	if _, seen := t.done[key]; seen {
		return
	}
	t.done[key] = time.Now()
	t.firstCalls += calls
	if t.onOne != nil {
		t.onOne()
	}
	if len(t.done) == t.want {
		t.doneAt = time.Now()
		close(t.all)
	}
}

// tallyReading is a tally at one moment.
type tallyReading struct {
	synced, elapsed   time.Duration // from start: caches synced, all converged (or now)
	converged         int
	reconciles, calls int
	firstCalls        int
	maxCalls          int
	busy              time.Duration
	failures          int
	lastErr           error
}

func (t *tally) read() tallyReading {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := tallyReading{
		converged: len(t.done), reconciles: t.reconciles, calls: t.calls,
		firstCalls: t.firstCalls, maxCalls: t.maxCalls, busy: t.busy,
		failures: t.failures, lastErr: t.lastErr,
	}
	if !t.syncedAt.IsZero() {
		r.synced = t.syncedAt.Sub(t.start)
	}
	end := t.doneAt
	if end.IsZero() {
		end = time.Now()
	}
	r.elapsed = end.Sub(t.start)
	return r
}
