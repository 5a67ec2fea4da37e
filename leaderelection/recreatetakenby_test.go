package leaderelection_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A leader's Lease is deleted mid-term. Between the leader's GET (404)
// and its re-create, a candidate that never saw the Lease creates it at
// once (the window docs/14 admits) and begins a term with a greater
// fence; the leader's re-create is answered 409 AlreadyExists. The
// leader has no earlier create in flight in this term (its acquiring
// create was answered 201 long before, and the Lease deleted since): the
// 409 can only be another candidate's create. Since 8747cc0 a leader's
// AlreadyExists is a failed attempt, not a lost term, on the guess that
// it may be its own late create. The Lease is then deleted again before
// the leader's next attempt (the newcomer is cut off from the API
// server, so it cannot put it back first); the leader's next attempt
// finds it absent, creates it, and goes on with the fence of the write
// that began its term, below the newcomer's, whose term began during it.
//
// Promise broken: Run's doc, a term ends "when another candidate holds
// the Lease" — the leader was told so, by the 409, and before 8747cc0 it
// ended its term there; Term.Fence's, "such a reader never refuses the
// current leader" — a reader that accepted the newcomer's fence refuses
// every write of the leader that goes on; attempt.go's own rule, "Taking
// it now would go on with this term's fence, below that term's: this
// term is over". docs/14 excuses a leader going on with its old fence
// only when "no write is left to show that another term came between";
// here the 409 showed it, and no late create of the leader's own could
// explain it. Passing means the leader's Run returns (ErrLost) instead
// of leading on with the lower fence.
func TestALeaderWhoseReCreateIsAnsweredByAnotherCandidatesCreateEndsItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

		fences := make(chan [2]any, 4) // identity, fence
		callbacks := func(id string) leaderelection.Callbacks {
			return leaderelection.Callbacks{
				OnStartedLeading: func(ctx context.Context) {
					term, _ := leaderelection.TermOf(ctx)
					fences <- [2]any{id, term.Fence}
					<-ctx.Done()
				},
				OnStoppedLeading: func() {},
			}
		}
		candidate := func(mem *fakeapiserver.InMemory, id string) *leaderelection.Elector {
			c, _ := config(t, mem.Config(), "default", "taken", id, callbacks(id))
			c.Logger = quiet
			return must(leaderelection.New(c))
		}

		// The newcomer: its requests work until its create has landed,
		// then it is cut off (503): it leads until its renew deadline.
		var newcomerCut atomic.Bool
		newcomerMem := inMemory(t, fakeapiserver.WithFaults(srv, func(*http.Request) fakeapiserver.Fault {
			if newcomerCut.Load() {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		newcomer := candidate(newcomerMem, "newcomer")
		newcomerDone := make(chan error, 1)

		var posts atomic.Int32
		var reCreate atomic.Int32 // the status the leader's first re-create was answered
		leaderMem := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || posts.Add(1) != 2 {
				srv.ServeHTTP(w, r)
				return
			}
			// The leader's first re-create, after its GET found the Lease
			// absent: the newcomer starts now, never having seen the
			// Lease, creates it at once, and leads.
			go func() { newcomerDone <- newcomer.Run(ctx) }()
			select {
			case got := <-fences:
				require.Equal(t, "newcomer", got[0])
				fences <- got
			case <-time.After(attemptTimeout / 2):
				t.Errorf("the newcomer did not lead at once")
			}
			newcomerCut.Store(true)
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, r)
			reCreate.Store(int32(rec.Code))
			// The Lease is deleted again before anyone's next attempt.
			del := httptest.NewRecorder()
			srv.ServeHTTP(del, httptest.NewRequest(http.MethodDelete, "/apis/coordination.k8s.io/v1/namespaces/default/leases/taken", nil))
			require.Equal(t, http.StatusOK, del.Code, "the second delete")
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		}))
		leader := candidate(leaderMem, "leader")
		leaderDone := make(chan error, 1)
		go func() { leaderDone <- leader.Run(ctx) }()

		first := <-fences
		require.Equal(t, "leader", first[0])
		leaderFence := first[1].(uint64)

		time.Sleep(time.Second)
		leases := must(leaderelection.NewClient(admin.Config()))
		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("taken").Do(ctx).Error())

		time.Sleep(retryPeriod + attemptTimeout) // the leader's next renew: its re-create
		require.Equal(t, int32(http.StatusConflict), reCreate.Load(), "the leader's re-create met the newcomer's create")
		second := <-fences
		require.Equal(t, "newcomer", second[0])
		newcomerFence := second[1].(uint64)
		require.Greater(t, newcomerFence, leaderFence, "the newcomer's term has the greater fence")

		select {
		case err := <-leaderDone:
			require.ErrorIs(t, err, leaderelection.ErrLost)
		case <-time.After(leaseDuration):
			holder := "<none>"
			if lease := getLease(ctx, t, admin.Config(), "default", "taken"); lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			t.Fatalf("the leader's term goes on with fence %d, below the fence %d of the newcomer's term, which began during it "+
				"(its re-create was answered 409 by the newcomer's create, with no create of its own in flight; Lease now held by %q)",
				leaderFence, newcomerFence, holder)
		}
		cancel()
		<-newcomerDone
	})
}
