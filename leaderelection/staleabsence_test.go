package leaderelection_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A standby's requests hang for a while, so the last version of the
// Lease it saw is old; meanwhile the leader renews, then someone deletes
// the Lease and the leader's requests fail. Its term runs until its last
// renew plus RenewDeadline. The standby, judging the absent Lease from
// when it last saw it change, would find it expired long before that and
// lead beside it. Absence is judged from when the standby first saw the
// Lease absent: the delete came after the leader's last renew, so the
// old term ends before the standby's wait does. (Found by the simulator,
// leader seed 134.)
func TestAStandbyWhoseLastSightIsOldWaitsOutADeletedLeaseFromWhenItSawItGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sd := newSides(t, fakeapiserver.Fault{Status: http.StatusServiceUnavailable}, fakeapiserver.Fault{Hang: true})
		memA, memB, aCut, bHangs := sd.a, sd.b, &sd.aFaulty, &sd.bFaulty
		terms := make(chan span, 4)
		candidate := func(mem *fakeapiserver.InMemory, id string) *leaderelection.Elector {
			return bubbleCandidate(t, mem, "stale", id, terms)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { _ = candidate(memA, "a").Run(ctx) })
		time.Sleep(time.Second) // a leads; b, started now, sees it held
		wg.Go(func() { _ = candidate(memB, "b").Run(ctx) })
		time.Sleep(time.Second)

		bHangs.Store(true) // b's last sight of the Lease is from now
		time.Sleep(3 * time.Second)
		aCut.Store(true) // a's last renew was moments ago: its term ends 3 s after it
		deleteLease(ctx, t, sd.admin, "stale")
		bHangs.Store(false)

		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.Len(t, got, 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}

// A leader whose requests fail loses its term; meanwhile another takes
// the Lease over, which the old leader never sees. Then someone deletes
// the Lease, and the old leader's requests work again: its last sight
// of the Lease names itself, from a term that has ended, which tells it
// no more than any standby knows. It must wait out the absent Lease like
// one, not put it back at once beside the new leader. (Found by the
// simulator, leader seed 134, once the first fix was in.)
func TestAFormerLeaderWhoseLastSightNamesItselfWaitsOutADeletedLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		memA, memB, aFails, bFails := sd.a, sd.b, &sd.aFaulty, &sd.bFaulty
		terms := make(chan span, 8)
		candidate := func(mem *fakeapiserver.InMemory, id string) *leaderelection.Elector {
			return bubbleCandidate(t, mem, "former", id, terms)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { _ = candidate(memA, "a").Run(ctx) })
		time.Sleep(time.Second) // a leads
		wg.Go(func() { _ = candidate(memB, "b").Run(ctx) })
		time.Sleep(time.Second)

		aFails.Store(true)           // a's term ends at its renew deadline; b takes over after LeaseDuration
		time.Sleep(10 * time.Second) // b leads by now; a never saw it
		bFails.Store(true)           // for a second, well within b's renew deadline: a asks first
		deleteLease(ctx, t, sd.admin, "former")
		aFails.Store(false)
		time.Sleep(time.Second)
		bFails.Store(false)

		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}

// A standby's last sight of the Lease is a released one (no holder, a
// duration of one second: ReleaseOnCancel's), and then its requests
// fail; meanwhile another candidate takes the released Lease and renews
// it, someone deletes it, and that leader's requests fail: its term runs
// until its last renew plus RenewDeadline. The standby, finding the
// Lease absent and its last sight free, created it at once and led
// beside it. A candidate that has seen the Lease at all waits out its
// absence, for at least its own LeaseDuration: what it last saw tells it
// nothing of who took the Lease since. (Found by review, after the
// simulator's seed 134.)
func TestAStandbyWhoseLastSightIsAReleasedLeaseWaitsOutADeletedLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var bWritesFail, bFails, cFails atomic.Bool
		memA := fakeapiserver.ServeInMemory(srv)
		defer memA.Close()
		memB := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			if bFails.Load() || bWritesFail.Load() && r.Method != http.MethodGet {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		defer memB.Close()
		memC := faultySide(srv, &cFails, fakeapiserver.Fault{Status: http.StatusServiceUnavailable})
		defer memC.Close()
		admin := fakeapiserver.ServeInMemory(srv)
		defer admin.Close()
		terms := make(chan span, 8)
		releasing := func(c *leaderelection.Config) { c.ReleaseOnCancel = true }
		candidate := func(mem *fakeapiserver.InMemory, id string) *leaderelection.Elector {
			return bubbleCandidate(t, mem, "released", id, terms, releasing)
		}
		ctx, cancel := context.WithCancel(t.Context())
		ctxA, cancelA := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { _ = candidate(memA, "a").Run(ctxA) })
		time.Sleep(time.Second) // a leads
		bWritesFail.Store(true) // b reads the Lease but cannot take it
		wg.Go(func() { _ = candidate(memB, "b").Run(ctx) })
		time.Sleep(time.Second)
		cancelA()                   // a releases the Lease: no holder
		time.Sleep(2 * time.Second) // b reads the released Lease, and fails to take it
		bFails.Store(true)          // b's last sight is the released Lease
		wg.Go(func() { _ = candidate(memC, "c").Run(ctx) })
		time.Sleep(2 * time.Second) // c took the released Lease and renews it

		cFails.Store(true) // c's last renew was moments ago: its term ends 3 s after it
		deleteLease(ctx, t, admin, "released")
		bFails.Store(false)
		bWritesFail.Store(false)

		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.Len(t, got, 3, "a's term, c's and b's")
		requireDisjoint(t, got)
	})
}

// A standby sees the Lease deleted, then its own requests fail for a
// while. Meanwhile the leader puts the Lease back and renews on, until
// someone deletes it again and the leader is cut off. When the standby
// can look again it finds the Lease absent, as it last saw it, but that
// first sight no longer bounds the leader's last renew: the standby
// waits out the absence afresh, from the look that found it again, and
// leads only after the leader's term has ended (the shape of the
// simulator's leader seed 134; found by the review).
func TestAStandbyThatMissedTheLeasesReturnWaitsOutASecondDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		memA, memB, aCut, bFails := sd.a, sd.b, &sd.aFaulty, &sd.bFaulty
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "twice") }

		wg.Go(func() { _ = bubbleCandidate(t, memA, "twice", "a", terms).Run(ctx) })
		time.Sleep(time.Second) // a leads
		wg.Go(func() { _ = bubbleCandidate(t, memB, "twice", "b", terms).Run(ctx) })
		time.Sleep(time.Second) // b sees it held

		aCut.Store(true)                    // a cannot put the Lease back yet; its term runs on to its deadline
		del()                               // the first delete
		time.Sleep(1300 * time.Millisecond) // b sees it absent: its looks are at most 1.1 s apart
		aCut.Store(false)                   // a puts it back on its next renew, and renews on
		bFails.Store(true)                  // b never sees it back
		time.Sleep(5 * time.Second)
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "twice").Spec.HolderIdentity, "a renews")
		aCut.Store(true) // a's last renew was moments ago: its term ends 3 s after it
		del()            // the second delete, after a's last renew
		bFails.Store(false)

		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}

// sides is one fake server served in memory to candidates a and b, each
// answering its requests with a fault of its own while its flag is set,
// and to an admin (see deleteLease). All close when the test ends.
type sides struct {
	a, b, admin      *fakeapiserver.InMemory
	aFaulty, bFaulty atomic.Bool
}

func newSides(t *testing.T, aFault, bFault fakeapiserver.Fault) *sides {
	srv := fakeapiserver.New()
	sd := &sides{admin: fakeapiserver.ServeInMemory(srv)}
	sd.a = faultySide(srv, &sd.aFaulty, aFault)
	sd.b = faultySide(srv, &sd.bFaulty, bFault)
	t.Cleanup(func() { sd.a.Close(); sd.b.Close(); sd.admin.Close() })
	return sd
}

// deleteLease deletes Lease kube-system/name through admin, as a cleanup
// script would.
func deleteLease(ctx context.Context, t *testing.T, admin *fakeapiserver.InMemory, name string) {
	t.Helper()
	client, err := leaderelection.NewClient(admin.Config())
	require.NoError(t, err)
	require.NoError(t, client.Delete().Namespace("kube-system").Resource("leases").Name(name).
		Body(&metav1.DeleteOptions{}).Do(ctx).Error())
}

// faultySide serves srv in memory to one candidate, answering its
// requests with f while on is true: that candidate's own faults.
func faultySide(srv *fakeapiserver.Server, on *atomic.Bool, f fakeapiserver.Fault) *fakeapiserver.InMemory {
	return fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(*http.Request) fakeapiserver.Fault {
		if on.Load() {
			return f
		}
		return fakeapiserver.Fault{}
	}))
}

// span is one term of one candidate, on the bubble's clock.
type span struct {
	who        string
	start, end time.Time
}

// bubbleCandidate is candidate id for Lease kube-system/name through mem,
// with short timings (4 s, 3 s, 500 ms), sending each of its terms to
// spans once the term has ended. change, if given, adjusts its Config.
func bubbleCandidate(t *testing.T, mem *fakeapiserver.InMemory, name, id string, spans chan<- span, change ...func(*leaderelection.Config)) *leaderelection.Elector {
	client, err := leaderelection.NewClient(mem.Config())
	require.NoError(t, err)
	cfg := leaderelection.Config{
		Client: client, Namespace: "kube-system", Name: name, Identity: id,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				start := time.Now()
				<-ctx.Done()
				spans <- span{id, start, time.Now()}
			},
			OnStoppedLeading: func() {},
		},
	}
	for _, c := range change {
		c(&cfg)
	}
	e, err := leaderelection.New(cfg)
	require.NoError(t, err)
	return e
}

// collect closes spans and returns what it held.
func collect(spans chan span) []span {
	close(spans)
	var got []span
	for s := range spans {
		got = append(got, s)
	}
	return got
}

// requireDisjoint fails if two terms overlap: two leaders at once.
func requireDisjoint(t *testing.T, terms []span) {
	t.Helper()
	for i, x := range terms {
		for _, y := range terms[i+1:] {
			require.False(t, x.start.Before(y.end) && y.start.Before(x.end),
				"%s led %v–%v and %s led %v–%v", x.who, x.start.Format("05.000"), x.end.Format("05.000"),
				y.who, y.start.Format("05.000"), y.end.Format("05.000"))
		}
	}
}

// The price of the rule above, as the package doc states it: a standby
// whose looks keep failing (one in three here) never takes a Lease
// deleted under a dead leader, since each failed look starts the wait
// afresh; once its looks work for a LeaseDuration, it leads. (The
// liveness cost was found by the second review.)
func TestAStandbyWhoseLooksKeepFailingTakesADeletedLeaseOnlyOnceTheyWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		admin := fakeapiserver.ServeInMemory(srv)
		defer admin.Close()
		memA := fakeapiserver.ServeInMemory(srv)
		defer memA.Close()
		var flaky atomic.Bool
		var gets atomic.Int64
		memB := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			if flaky.Load() && r.Method == http.MethodGet && gets.Add(1)%3 == 0 {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		defer memB.Close()
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		ctxA, killA := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		bLeads := make(chan time.Time, 1)
		wg.Go(func() { _ = bubbleCandidate(t, memA, "flaky", "a", terms).Run(ctxA) })
		time.Sleep(time.Second) // a leads
		b := bubbleCandidate(t, memB, "flaky", "b", terms, func(c *leaderelection.Config) {
			lead := c.Callbacks.OnStartedLeading
			c.Callbacks.OnStartedLeading = func(ctx context.Context) {
				select {
				case bLeads <- time.Now():
				default:
				}
				lead(ctx)
			}
		})
		wg.Go(func() { _ = b.Run(ctx) })
		time.Sleep(2 * time.Second) // b sees a's Lease

		killA() // a dies without releasing (bubbleCandidate does not release)
		time.Sleep(100 * time.Millisecond)
		deleteLease(ctx, t, admin, "flaky")
		flaky.Store(true)
		select {
		case at := <-bLeads:
			t.Fatalf("b led at %v while one look in three failed", at)
		case <-time.After(40 * time.Second):
		}
		healed := time.Now()
		flaky.Store(false)
		select {
		case at := <-bLeads:
			t.Logf("b leads %v after its looks work again (%d looks while flaky)", at.Sub(healed), gets.Load())
		case <-time.After(20 * time.Second):
			t.Fatal("b did not lead within 20 s of its looks working again")
		}
	})
}
