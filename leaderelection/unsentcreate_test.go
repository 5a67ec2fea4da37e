package leaderelection_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A create that never left the client (it waited in the client's own
// rate limiter when Run's context ended) cannot have landed: no request
// reached the server, no Lease ever existed. Config.OwnLeaseOnly ends
// an identity only for a Lease it saw, or "sent a create of that the
// server did not refuse"; and Run's doc says "Run again to stand
// again". The second Run creates the Lease and leads: the elector waits
// for the client's rate limiter itself, so it knows such a create sent
// nothing. (Before, every error that was not a 4xx Status counted as a
// create sent, and the second Run returned ErrNotOwnLease, "lease
// default/own was deleted".)
func TestAnOwnLeaseOnlyCandidateWhoseCreateNeverLeftTheClientStillLeads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var posts atomic.Int32
		net := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost {
				posts.Add(1)
			}
			return fakeapiserver.Fault{}
		}))
		cfg := net.Config()
		// The elector's own limiter (NewClient): a request every 500 ms,
		// so an attempt's GET and create fit in one AttemptTimeout.
		cfg.QPS, cfg.Burst = 2, 1
		ts := newTerms()
		c, _ := config(t, cfg, "default", "own", "me", ts.callbacks("me", nil))
		c.OwnLeaseOnly = true
		el := must(leaderelection.New(c))

		first, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- el.Run(first) }()
		time.Sleep(retryPeriod / 2) // the first attempt's GET found no Lease; its create waits for a token
		stop()
		err := <-done
		require.Zero(t, posts.Load(), "the first Run's create reached the server (Run returned %v)", err)
		time.Sleep(2 * time.Second) // the limiter fills again

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { done <- el.Run(ctx) }()
		select {
		case <-ts.started:
		case err := <-done:
			t.Fatalf("the second Run returned %v; no create of the Lease ever reached the server before it (%d POSTs), and no Lease ever existed", err, posts.Load())
		case <-time.After(3 * leaseDuration):
			t.Fatal("no term began")
		}
		cancel()
		<-done
	})
}
