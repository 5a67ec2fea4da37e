package leaderelection_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// A leader derives a timeout longer than RenewDeadline from its term, as
// a reconcile or a sync wait does. It must fire at its own time while the
// term goes on: a leading context whose Deadline reported the moving term
// end would make context.WithTimeout arm no timer of its own, and the
// derived context would end only with the term. On the fake API server,
// in a synctest bubble, so "at its own time" is exact.
func TestATimeoutLongerThanRenewDeadlineDerivedFromATermFiresWhileTheTermGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		timeout := renewDeadline + time.Second
		type outcome struct {
			waited    time.Duration
			termEnded bool
			timedOut  bool
		}
		result := make(chan outcome, 1)
		cfg, _ := config(t, mem.Config(), "kube-system", "timeouts", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				start := time.Now()
				derived, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				select {
				case <-derived.Done():
				case <-time.After(3 * timeout): // against hanging: the bug's symptom
				}
				result <- outcome{waited: time.Since(start), termEnded: ctx.Err() != nil, timedOut: derived.Err() != nil}
				<-ctx.Done()
			},
			OnStoppedLeading: func() {},
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		got := <-result
		cancel()
		require.NoError(t, <-done)
		require.True(t, got.timedOut, "the derived %v timeout had not fired after %v", timeout, got.waited)
		require.False(t, got.termEnded, "the term ended: the test proves nothing")
		require.Equal(t, timeout, got.waited, "it fired at its own time")
	})
}

// Every term learns its fencing number, the resourceVersion of the write
// that began it: a later term's is greater, so a write that carries it
// can be told from a deposed leader's.
func TestEachTermLearnsAFencingNumberThatGrowsWithEachChangeOfHands(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	var fences []uint64
	for _, id := range []string{"first", "second", "third"} {
		terms := make(chan leaderelection.Term, 1)
		cfg, _ := config(t, cp.Config(), ns, "fenced", id, leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, ok := leaderelection.TermOf(ctx)
				require.True(t, ok, "a leading context carries its term")
				terms <- term
				<-ctx.Done()
			},
			OnStoppedLeading: func() {},
		})
		cfg.ReleaseOnCancel = true
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		term := <-terms
		require.Equal(t, id, term.Identity)
		require.Equal(t, ns+"/fenced", term.Lease)
		end := term.End()
		require.True(t, end.After(time.Now()) && !end.After(time.Now().Add(renewDeadline)),
			"the term ends within RenewDeadline of its last renew (%v)", end)
		fences = append(fences, term.Fence)
		cancel()
		require.NoError(t, <-done)
	}
	require.NotZero(t, fences[0], "a kube-apiserver's resourceVersions are integers: every term has a fence")
	require.Less(t, fences[0], fences[1])
	require.Less(t, fences[1], fences[2])
}

// TermOf a context outside every term returns the zero Term and false. A
// caller that asks the zero Term for its end anyway gets the zero time,
// an end long past, not a crash.
func TestTheZeroTermEndsAtTheZeroTime(t *testing.T) {
	term, ok := leaderelection.TermOf(context.Background())
	require.False(t, ok)
	var end time.Time
	require.NotPanics(t, func() { end = term.End() })
	require.True(t, end.IsZero(), "the zero Term ends at %v", end)
}
