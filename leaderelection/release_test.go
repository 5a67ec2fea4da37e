package leaderelection_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// With ReleaseOnCancel, ending the leader's Run gives the Lease up, and
// the standby leads within one wait plus two attempts of the release,
// well before the LeaseDuration it would otherwise wait. Run returns nil.
func TestOnShutdownAReleasedLeaseIsTakenOnTheStandbysNextAttempt(t *testing.T) {
	require.Less(t, releaseBound, leaseDuration, "the bound proves the standby did not wait for expiry")
	// On the fake API server in a synctest bubble: the bound is checked on
	// simulated time, which a loaded machine does not stretch.
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		ns := "default"
		ts := newTerms()
		guard := takeoverBound + time.Minute

		ctxA, stopA := context.WithCancel(context.Background())
		defer stopA()
		cfgA, _ := config(t, mem.Config(), ns, "released", "leaving", ts.callbacks("leaving", nil))
		cfgA.ReleaseOnCancel = true
		a := must(leaderelection.New(cfgA))
		aDone := make(chan error, 1)
		go func() { aDone <- a.Run(ctxA) }()
		awaitTerm(t, ts, guard, "the first candidate leads")

		ctxB, stopB := context.WithCancel(context.Background())
		defer stopB()
		sawA := make(chan struct{})
		var once sync.Once
		cfgB, _ := config(t, mem.Config(), ns, "released", "staying", ts.callbacks("staying", func(id string) {
			if id == "leaving" {
				once.Do(func() { close(sawA) })
			}
		}))
		go must(leaderelection.New(cfgB)).Run(ctxB)
		<-sawA

		stopA()
		require.NoError(t, <-aDone, "a term ended by its context, released, is no error")
		released := time.Now() // the release has landed
		b := awaitTerm(t, ts, guard, "the standby leads")
		took := b.start.Sub(released)
		t.Logf("standby led %v after the release (bound %v = %v + 2×%v)", took.Round(time.Millisecond),
			releaseBound, maxAcquireWait, attemptTimeout)
		require.Less(t, took, releaseBound)
	})
}
