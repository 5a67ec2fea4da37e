package leaderelection_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// failover tries each request on primary and, if primary fails, sends
// it on secondary: a client of several API server endpoints, or one
// with a fallback route (a tunnel, an egress proxy), whose first
// endpoint is down. Its primary is net/http's transport, whose dial is
// refused.
type failover struct{ primary, secondary http.RoundTripper }

func (f failover) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := f.primary.RoundTrip(r)
	if err == nil {
		return resp, nil
	}
	return f.secondary.RoundTrip(r)
}

// A client whose POST first goes to an endpoint that refuses the dial,
// and then through a fallback route: the POST lands there, its answer
// is lost (the connection reset), and the Lease is then deleted (taken
// over and collected). A failed dial says only that one route failed,
// not that no route carried the request: the create may have landed,
// and an OwnLeaseOnly candidate does not lead on that Lease again
// (Config.OwnLeaseOnly). (c319950 took a failed dial for a create never
// sent, created the Lease again and led.)
func TestAnOwnLeaseOnlyCandidateWhoseClientFailsOverAfterAFailedDialCountsItsLostCreateAsPossiblyLanded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := inMemory(t, srv)
		var posts, dials atomic.Int32
		down := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			dials.Add(1)
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}}
		fallback := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, r) // the create lands
			if posts.Add(1) > 1 {
				return rec.Result(), nil
			}
			// its answer is lost; the Lease is taken over and deleted
			del := httptest.NewRequest(http.MethodDelete, "/apis/coordination.k8s.io/v1/namespaces/default/leases/own", nil)
			gone := httptest.NewRecorder()
			srv.ServeHTTP(gone, del)
			if gone.Code != http.StatusOK {
				t.Errorf("deleting the Lease: %d %s", gone.Code, gone.Body.String())
			}
			return nil, errors.New("read: connection reset by peer")
		})
		cfg := &rest.Config{Host: "http://fakeapiserver", Transport: byMethod{reads: mem.Config().Transport, writes: failover{primary: down, secondary: fallback}}}
		ts := newTerms()
		c, _ := config(t, cfg, "default", "own", "me", ts.callbacks("me", nil))
		c.OwnLeaseOnly = true
		el := must(leaderelection.New(c))

		ctx, cancel := context.WithTimeout(t.Context(), 3*leaseDuration)
		defer cancel()
		err := el.Run(ctx)
		require.NotZero(t, posts.Load(), "no create was sent")
		require.NotZero(t, dials.Load(), "the primary endpoint was never dialled")
		select {
		case tm := <-ts.started:
			t.Fatalf("a term began (%v) after its first create landed through the fallback route (its answer lost) and the Lease was deleted; %d POSTs, %d refused dials; Run returned %v", tm, posts.Load(), dials.Load(), err)
		default:
		}
		require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v, want ErrNotOwnLease", err)
	})
}
