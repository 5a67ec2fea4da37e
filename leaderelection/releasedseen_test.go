package leaderelection_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A standby that sees the Lease released takes it in the same attempt.
// OnNewLeader is told the holder each attempt ends with, not each
// holder seen within it (as client-go's is): so this standby is told
// of its own term, never of the release it took the Lease from. (The
// doc said it was called "when the holder this candidate observes
// changes ... in the order observed", which promised "" first.) On the
// fake API server, in a synctest bubble.
func TestAStandbyThatTakesAReleasedLeaseInOneAttemptIsToldOfItselfNotOfTheRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		ts := newTerms()
		cfgA, _ := config(t, mem.Config(), "default", "handover", "a", ts.callbacks("a", nil))
		cfgA.ReleaseOnCancel = true
		ctxA, stopA := context.WithCancel(t.Context())
		doneA := make(chan error, 1)
		go func() { doneA <- must(leaderelection.New(cfgA)).Run(ctxA) }()
		require.Equal(t, "a", (<-ts.started).id)

		var mu sync.Mutex
		var seen []string
		cfgB, _ := config(t, mem.Config(), "default", "handover", "b", ts.callbacks("b", func(id string) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, id)
		}))
		ctxB, stopB := context.WithCancel(t.Context())
		doneB := make(chan error, 1)
		go func() { doneB <- must(leaderelection.New(cfgB)).Run(ctxB) }()
		synctest.Wait() // b's first attempt: held by a

		stopA()
		require.NoError(t, <-doneA, "a released the Lease")
		require.Equal(t, "b", (<-ts.started).id)
		stopB()
		<-doneB
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"a", "b"}, seen, "b's OnNewLeader calls: the release it saw and took in one attempt is not told")
	})
}
