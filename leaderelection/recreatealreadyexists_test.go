package leaderelection_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A leader whose Lease is deleted mid-term puts it back (attempt.go: "a
// deleted Lease is created again, and the term goes on"; doc.go: "The
// leader creates it again on its next renew and goes on"). Its first
// re-create is held by a slow server past the attempt's timeout and
// lands late, just before its second re-create reaches the server: the
// second is answered 409 AlreadyExists, by the leader's own landed
// create. Nobody else ever wrote the Lease: it is held by the leader,
// renewed by it during its term. tryAcquireOrRenew takes the
// AlreadyExists for "another candidate created it first" (held false,
// no error), and lead() ends the term with ErrLost, "lease ... is held
// by "me"" — its own identity.
//
// Promise broken: Run's doc, a term ends "when ctx ends, when another
// candidate holds the Lease, or at the last successful renew plus
// RenewDeadline"; none holds here. Passing means the term goes on: Run
// has not returned a leaseDuration later, and the leader still renews.
func TestALeaderWhoseReCreateIsAnsweredByItsOwnLandedCreateKeepsItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		var posts atomic.Int32
		var mu sync.Mutex
		var held *http.Request // the first re-create, served late
		side := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				srv.ServeHTTP(w, r)
				return
			}
			switch posts.Add(1) {
			case 2: // the first re-create: the server stalls past the attempt's timeout
				body, _ := io.ReadAll(r.Body)
				late := r.Clone(context.Background())
				late.Body = io.NopCloser(bytes.NewReader(body))
				mu.Lock()
				held = late
				mu.Unlock()
				<-r.Context().Done()
				return
			case 3: // the second re-create: the stalled one lands just before it
				mu.Lock()
				late := held
				mu.Unlock()
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, late)
				require.Equal(t, http.StatusCreated, rec.Code, "the first re-create lands late")
			}
			srv.ServeHTTP(w, r)
		}))

		ts := newTerms()
		c, _ := config(t, side.Config(), "default", "recreated", "me", ts.callbacks("me", nil))
		el := must(leaderelection.New(c))
		done := make(chan error, 1)
		go func() { done <- el.Run(ctx) }()
		awaitTerm(t, ts, 2*attemptTimeout, "the candidate creates the Lease")

		time.Sleep(time.Second)
		leases := must(leaderelection.NewClient(admin.Config()))
		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("recreated").Do(ctx).Error())

		select {
		case err := <-done:
			holder := "<none>"
			if lease := getLease(ctx, t, admin.Config(), "default", "recreated"); lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			t.Fatalf("the leader's term ended (%d POSTs, Lease now held by %q, written by no one else): Run returned %v", posts.Load(), holder, err)
		case <-time.After(leaseDuration):
		}
		require.GreaterOrEqual(t, posts.Load(), int32(3), "the leader re-created its Lease twice")
		require.Equal(t, "me", *getLease(ctx, t, admin.Config(), "default", "recreated").Spec.HolderIdentity)
		cancel()
		<-done
	})
}
