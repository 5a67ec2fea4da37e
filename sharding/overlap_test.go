package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// overlapWatch is the reconcile of members that must never reconcile the
// key named name at once: it records every reconcile of that key that
// begins on one member while another member's is still running, and
// reports each one's member on reconciled as it begins. Once slow is
// set, each such reconcile lasts slowFor, so that a second member's
// would overlap it. Other keys are reconciled at once, doing nothing.
type overlapWatch struct {
	name       string
	slowFor    time.Duration
	slow       atomic.Bool
	reconciled chan string

	mu       sync.Mutex
	running  map[string]int // member -> reconciles of the key in flight
	overlaps []string
}

// watchOverlapsOf returns an overlapWatch of the key named name.
func watchOverlapsOf(name string, slowFor time.Duration) *overlapWatch {
	return &overlapWatch{name: name, slowFor: slowFor, reconciled: make(chan string, 64), running: map[string]int{}}
}

// of is the reconcile of member, to run in its controller.
func (o *overlapWatch) of(member string) workqueue.ReconcileFunc[informer.Key] {
	return func(_ context.Context, key informer.Key) (workqueue.Result, error) {
		if key.Name != o.name {
			return workqueue.Result{}, nil
		}
		o.mu.Lock()
		for m, n := range o.running {
			if m != member && n > 0 {
				o.overlaps = append(o.overlaps, fmt.Sprintf("%s began reconciling the %s at %v while %s still did", member, o.name, time.Now(), m))
			}
		}
		o.running[member]++
		o.mu.Unlock()
		o.reconciled <- member
		if o.slow.Load() {
			time.Sleep(o.slowFor)
		}
		o.mu.Lock()
		o.running[member]--
		o.mu.Unlock()
		return workqueue.Result{}, nil
	}
}

// requireNone fails unless no reconcile of the key overlapped another
// member's.
func (o *overlapWatch) requireNone(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.Empty(t, o.overlaps, "the %s was reconciled by two members at once", o.name)
}
