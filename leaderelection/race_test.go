package leaderelection_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/leaderelection"
)

// Two candidates find no Lease and both create it: their POSTs are held
// until both are sent, so the race is certain. The API server takes one
// and answers the other 409 AlreadyExists. Exactly one leads; the other
// logs no failure (a lost race is no error), goes on, and sees the winner.
// On the fake API server, in a synctest bubble: the held POST waits on
// simulated time, so however long the machine takes to send the other,
// its AttemptTimeout does not run out and it is sent.
func TestTwoCandidatesCreatingTheLeaseAtOnceOneLeadsAndTheOtherFollows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		ns := "default"
		ts := newTerms()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		var bothSent sync.WaitGroup
		bothSent.Add(2)
		var answers sync.Map  // id → the status of its POST
		var answered sync.Map // id → when its POST was answered (simulated time)
		seen := make(chan string, 8)
		logs := map[string]*testlog.Buffer{}
		var wg sync.WaitGroup
		for _, id := range []string{"first", "second"} {
			cfg := mem.Config()
			var once sync.Once
			cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if req.Method != http.MethodPost {
						return rt.RoundTrip(req)
					}
					once.Do(func() { bothSent.Done(); bothSent.Wait() })
					resp, err := rt.RoundTrip(req)
					if err == nil {
						answers.LoadOrStore(id, resp.StatusCode)
						answered.LoadOrStore(id, time.Now())
					}
					return resp, err
				})
			}
			c, buf := config(t, cfg, ns, "raced", id, ts.callbacks(id, func(leader string) { seen <- id + " sees " + leader }))
			logs[id] = buf
			el := must(leaderelection.New(c))
			wg.Go(func() { el.Run(ctx) })
		}

		winner := awaitTerm(t, ts, takeoverBound+time.Minute, "one candidate leads")
		loser := map[string]string{"first": "second", "second": "first"}[winner.id]
		want := loser + " sees " + winner.id
		for got := ""; got != want; {
			select {
			case got = <-seen:
			case <-time.After(time.Minute): // bubble time: a guard against hanging
				t.Fatalf("the loser never observed the winner")
			}
		}
		sawAt := time.Now()
		// The loser sees the winner only after its create was answered.
		won, _ := answers.Load(winner.id)
		lost, _ := answers.Load(loser)
		require.Equal(t, http.StatusCreated, won, "the winner's create was taken")
		require.Equal(t, http.StatusConflict, lost, "the loser's create was answered 409: the race happened")
		lostAt, _ := answered.Load(loser)
		require.Equal(t, lostAt.(time.Time), sawAt,
			"the loser saw the winner %v after its create was refused, not at once", sawAt.Sub(lostAt.(time.Time)))
		select {
		case tm := <-ts.started:
			t.Fatalf("%s leads too", tm.id)
		case <-time.After(2 * maxAcquireWait): // a loser that were to lead would by now; no bound relies on it
		}
		require.NotContains(t, logs[loser].String(), "attempt failed", "a lost race is logged as a failure")
		lease := getLease(ctx, t, mem.Config(), ns, "raced")
		require.Equal(t, winner.id, *lease.Spec.HolderIdentity)
		require.EqualValues(t, 0, *lease.Spec.LeaseTransitions)
		cancel()
		wg.Wait()
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
