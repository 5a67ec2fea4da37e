package leaderelection_test

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/leaderelection"
)

// The tests' timing: leases of whole seconds, as the issue asks. Every
// bound a test asserts is computed from these, never from a sleep.
const (
	leaseDuration  = 4 * time.Second
	renewDeadline  = 3 * time.Second
	retryPeriod    = 500 * time.Millisecond
	attemptTimeout = 750 * time.Millisecond // bounds each attempt, so each round trip a bound counts
)

// maxAcquireWait is the longest a standby waits between two attempts.
var maxAcquireWait = time.Duration(float64(retryPeriod) * (1 + leaderelection.JitterFactor))

// must returns v, and panics (failing the test) if err is not nil.
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// term is one [start, end) of leadership, on the test's clock: this
// host's, or inside a synctest bubble the bubble's.
type term struct {
	id         string
	start, end time.Time
	deadline   time.Time // the term's final End()
}

// terms records the terms of every candidate of one test.
type terms struct {
	mu      sync.Mutex
	all     []term
	started chan term // every start, in order
}

func newTerms() *terms { return &terms{started: make(chan term, 64)} }

// callbacks returns Callbacks that record each term of candidate id: it
// starts when OnStartedLeading is called and ends when its context does.
func (ts *terms) callbacks(id string, onNewLeader func(string)) leaderelection.Callbacks {
	return leaderelection.Callbacks{
		OnStartedLeading: func(ctx context.Context) {
			start := time.Now()
			ts.started <- term{id: id, start: start}
			<-ctx.Done()
			end := time.Now()
			current, _ := leaderelection.TermOf(ctx)
			deadline := current.End()
			ts.mu.Lock()
			ts.all = append(ts.all, term{id: id, start: start, end: end, deadline: deadline})
			ts.mu.Unlock()
		},
		OnStoppedLeading: func() {},
		OnNewLeader:      onNewLeader,
	}
}

// requireNoOverlap fails unless every term ended before the next began.
func requireNoOverlap(t *testing.T, all []term) {
	t.Helper()
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	for i := 1; i < len(all); i++ {
		prev, next := all[i-1], all[i]
		require.True(t, next.start.After(prev.end),
			"%s began at %v, before %s's term ended at %v", next.id, next.start, prev.id, prev.end)
	}
}

// config is a Config for lease ns/name with the tests' timing, logging
// to a buffer the test may read.
func config(t *testing.T, cfg *rest.Config, ns, name, id string, cb leaderelection.Callbacks) (leaderelection.Config, *testlog.Buffer) {
	t.Helper()
	logs := &testlog.Buffer{}
	return leaderelection.Config{
		Client:    must(leaderelection.NewClient(cfg)),
		Namespace: ns, Name: name, Identity: id,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline,
		RetryPeriod: retryPeriod, AttemptTimeout: attemptTimeout,
		Callbacks: cb,
		Logger:    slog.New(slog.NewTextHandler(logs, nil)),
	}, logs
}

// getLease reads the Lease as the admin.
func getLease(ctx context.Context, t *testing.T, cfg *rest.Config, ns, name string) *coordinationv1.Lease {
	t.Helper()
	lease := &coordinationv1.Lease{}
	client := must(leaderelection.NewClient(cfg))
	require.NoError(t, client.Get().Namespace(ns).Resource("leases").Name(name).Do(ctx).Into(lease))
	return lease
}

// awaitTerm returns the next started term, or fails after within.
func awaitTerm(t *testing.T, ts *terms, within time.Duration, what string) term {
	t.Helper()
	select {
	case tm := <-ts.started:
		return tm
	case <-time.After(within):
		t.Fatalf("no term started within %v: %s", within, what)
		return term{}
	}
}

// takeoverBound is the longest a standby may take to lead after the
// leader's last write landed, when that leader then went silent. The
// standby sees the last version at most one attempt and one wait after
// it landed, plus that attempt's GET; it waits out the lease on its own
// clock; then at most one more attempt and wait pass before the attempt
// that takes the Lease, which itself takes at most one AttemptTimeout.
//
//	attempt+wait+attempt → LeaseDuration → attempt+wait → attempt
//
// It holds only while every attempt ends within AttemptTimeout and every
// wait on time, which a loaded machine does not promise: against a real
// API server the tests use it only in guards against hanging; silentBound
// is the bound asserted, on simulated time.
var takeoverBound = leaseDuration + 2*maxAcquireWait + 4*attemptTimeout

// releaseBound is the longest a standby may take to lead after a release
// landed: the attempt in flight, one wait, and the attempt that takes it.
var releaseBound = maxAcquireWait + 2*attemptTimeout

// inMemory serves srv (the fake API server, or srv wrapped in faults) in
// memory until the test ends; call it inside a synctest bubble.
func inMemory(t *testing.T, srv http.Handler) *fakeapiserver.InMemory {
	mem := fakeapiserver.ServeInMemory(srv)
	t.Cleanup(mem.Close)
	return mem
}
