package leaderelection_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// byMethod sends POSTs through writes and every other request through
// reads: a client whose writes take another route (a RoundTripper that
// routes or signs writes apart, or sends them with a context of its own)
// than its reads, which go through net/http's transport.
type byMethod struct{ reads, writes http.RoundTripper }

func (b byMethod) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		return b.writes.RoundTrip(r)
	}
	return b.reads.RoundTrip(r)
}

// A client whose GETs go through net/http's transport, which reports
// traces, and whose POSTs through a RoundTripper that reports nothing:
// the POST lands, its answer is lost (the connection reset), and its
// Lease is then deleted (taken over and collected). Nothing told the
// elector the create never left, so it counts it as possibly landed and
// never creates that Lease again: Run returns ErrNotOwnLease and no term
// begins (Config.OwnLeaseOnly). Judging by a flag learned from other
// requests ("this transport reports traces") once counted it as never
// sent, and the candidate led.
func TestAnOwnLeaseOnlyCandidateWhosePOSTGoesThroughAnUntracedRouteCountsItsLostCreateAsPossiblyLanded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := inMemory(t, srv)
		var posts atomic.Int32
		writes := roundTripFunc(func(r *http.Request) (*http.Response, error) {
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
		cfg := &rest.Config{Host: "http://fakeapiserver", Transport: byMethod{reads: mem.Config().Transport, writes: writes}}
		ts := newTerms()
		c, _ := config(t, cfg, "default", "own", "me", ts.callbacks("me", nil))
		c.OwnLeaseOnly = true
		el := must(leaderelection.New(c))

		ctx, cancel := context.WithTimeout(t.Context(), 3*leaseDuration)
		defer cancel()
		err := el.Run(ctx)
		require.NotZero(t, posts.Load(), "no create was sent")
		select {
		case tm := <-ts.started:
			t.Fatalf("a term began (%v) after its first create landed (its answer lost) and the Lease was deleted; %d POSTs; Run returned %v", tm, posts.Load(), err)
		default:
		}
		require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v, want ErrNotOwnLease", err)
	})
}
