package leaderelection_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// The Lease is deleted twice, each time after its leader's term ended
// without a release. First a standby that saw it held waits it out and
// creates it again; then a candidate that started after the delete, and
// never saw the old Lease, creates it at once. Each new leader's fence
// must exceed every earlier term's, so that a reader that refuses lower
// fences never refuses the leader of the day, whoever created the Lease
// and whatever it remembered.
func TestAFenceGrowsAcrossADeletedLeaseWhoeverCreatesItAgain(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	admin := must(leaderelection.NewClient(cp.Config()))
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
		cfg, _ := config(t, cp.Config(), ns, "refenced", id, leaderelection.Callbacks{
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
	deleteLease := func() {
		require.NoError(t, admin.Delete().Namespace(ns).Resource("leases").Name("refenced").
			Body(&metav1.DeleteOptions{}).Do(t.Context()).Error())
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
	deleteLease()
	f3 := fenceOf(standby, "the standby")
	require.Greater(t, f3, f2, "the standby created the deleted Lease again with a fence below the deposed leader's")

	// A candidate that never saw the old Lease creates it at once.
	standby.stop()
	deleteLease()
	late := start("late", false)
	f4 := fenceOf(late, "the late candidate")
	require.Greater(t, f4, f3, "a candidate that never saw the deleted Lease led with a fence below the deposed leader's")
	late.stop()
	t.Logf("fences: %d, %d, %d, %d", f1, f2, f3, f4)
}
