package leaderelection_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// The Lease is deleted twice, each time after its leader's term ended
// without a release. First a standby that saw it held waits it out and
// creates it again; then a candidate that started after the delete, and
// never saw the old Lease, creates it at once. Each new leader's fence
// must exceed every earlier term's, so that a reader that refuses lower
// fences never refuses the leader of the day, whoever created the Lease
// and whatever it remembered. On the fake API server (whose
// resourceVersions grow as etcd's revision does), in a synctest bubble.
func TestAFenceGrowsAcrossADeletedLeaseWhoeverCreatesItAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { fenceAcrossDeletes(t) })
}

func fenceAcrossDeletes(t *testing.T) {
	admin := inMemory(t, fakeapiserver.New())
	guard := takeoverBound + time.Minute // against hanging, not a timing

	// candidate runs id until its stop is called, which ends its term
	// without a release; fence receives its term's fence, and seen every
	// holder it observes.
	type candidate struct {
		fence chan uint64
		seen  chan string
		stop  func()
	}
	start := func(id string, release bool) candidate {
		c := candidate{fence: make(chan uint64, 1), seen: make(chan string, 16)}
		cfg, _ := config(t, admin.Config(), "kube-system", "refenced", id, leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, _ := leaderelection.TermOf(ctx)
				c.fence <- term.Fence
				<-ctx.Done()
			},
			OnStoppedLeading: func() {},
			OnNewLeader:      func(holder string) { c.seen <- holder },
		})
		cfg.ReleaseOnCancel = release
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		c.stop = func() { cancel(); require.NoError(t, <-done) }
		t.Cleanup(cancel)
		return c
	}
	fenceOf := func(c candidate, who string) uint64 {
		select {
		case f := <-c.fence:
			return f
		case <-time.After(guard):
			t.Fatalf("%s never led", who)
			return 0
		}
	}
	awaitSeen := func(c candidate, holder string) {
		for {
			select {
			case h := <-c.seen:
				if h == holder {
					return
				}
			case <-time.After(guard):
				t.Fatalf("%s was never observed holding the Lease", holder)
			}
		}
	}
	// Two terms, one handing over to the next by release.
	first := start("first", true)
	f1 := fenceOf(first, "first")
	first.stop()
	second := start("second", false)
	f2 := fenceOf(second, "second")
	require.Greater(t, f2, f1, "the second term's fence is not above the first's")

	// A standby that saw the Lease held waits out its delete, then creates it.
	standby := start("standby", false)
	awaitSeen(standby, "second")
	second.stop()
	deleteLease(t.Context(), t, admin, "refenced")
	f3 := fenceOf(standby, "the standby")
	require.Greater(t, f3, f2, "the standby created the deleted Lease again with a fence below the deposed leader's")

	// A candidate that never saw the old Lease creates it at once.
	standby.stop()
	deleteLease(t.Context(), t, admin, "refenced")
	late := start("late", false)
	f4 := fenceOf(late, "the late candidate")
	require.Greater(t, f4, f3, "a candidate that never saw the deleted Lease led with a fence below the deposed leader's")
	late.stop()
	t.Logf("fences: %d, %d, %d, %d", f1, f2, f3, f4)
}
