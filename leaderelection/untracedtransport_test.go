package leaderelection_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// untraced is a RoundTripper that is not net/http's: it serves each
// request from the handler itself and reports nothing through
// net/http/httptrace, as a custom transport may not.
type untraced struct{ h http.Handler }

func (u untraced) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	u.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// As TestAnOwnLeaseOnlyCandidateWhoseCreateNeverLeftTheClientStillLeads,
// through a transport that reports no trace: a create whose context
// ended while it waited for the client's rate limiter is known never to
// have left, whatever the transport, since the elector waits for the
// limiter itself. The second Run creates the Lease and leads.
func TestAnOwnLeaseOnlyCandidateBehindAnUntracedTransportWhoseCreateWaitedForTheLimiterStillLeads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var posts atomic.Int32
		srv := fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost {
				posts.Add(1)
			}
			return fakeapiserver.Fault{}
		})
		cfg := &rest.Config{Host: "http://fakeapiserver", Transport: untraced{srv}}
		cfg.QPS, cfg.Burst = 2, 1 // as in the traced test: the create waits for a token
		ts := newTerms()
		c, _ := config(t, cfg, "default", "own", "me", ts.callbacks("me", nil))
		c.OwnLeaseOnly = true
		el := must(leaderelection.New(c))

		first, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- el.Run(first) }()
		time.Sleep(retryPeriod / 2)
		stop()
		err := <-done
		require.Zero(t, posts.Load(), "the first Run's create reached the server (Run returned %v)", err)
		time.Sleep(2 * time.Second)

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { done <- el.Run(ctx) }()
		select {
		case <-ts.started:
		case err := <-done:
			t.Fatalf("the second Run returned %v; the first Run's create never reached the server (%d POSTs)", err, posts.Load())
		case <-time.After(3 * leaseDuration):
			t.Fatal("no term began")
		}
		cancel()
		<-done
	})
}
