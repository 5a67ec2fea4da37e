package leaderelection_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// landedServerTimeout serves r (the write lands), then answers as
// kube-apiserver does when etcd committed the write but did not answer
// in time: 500 ServerTimeout with a Retry-After (storeerr's
// InterpretUpdateError: NewServerTimeout(resource, "update", 2)).
func landedServerTimeout(next http.Handler, w http.ResponseWriter, r *http.Request) {
	next.ServeHTTP(httptest.NewRecorder(), r)
	status := apierrors.NewServerTimeout(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "update", 2).ErrStatus
	status.Kind, status.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	w.WriteHeader(http.StatusInternalServerError)
	_ = json.NewEncoder(w).Encode(&status)
}

// A leader's renews meet a slow etcd: each PUT lands, but the API server
// answers 500 ServerTimeout with a Retry-After, and client-go sends the
// PUT again, with the resourceVersion the landed write replaced: 409
// Conflict. The fast path's conflict sends the renew to the slow path,
// which reads the Lease (its own) and updates it; that PUT meets the same
// etcd, and its retry's 409 is taken for another's write: the term ends
// with ErrLost ("written by another since this leader read it"), though
// every write since the term began was this leader's and the Lease names
// it, renewed, with no other candidate in sight. The create, which has
// the same hazard, is sent with MaxRetries(0) (leases.create); the update
// is not.
func TestALeaderWhoseLandedRenewIsRetriedByTheClientKeepsItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var slow atomic.Int32 // PUTs left in the slow-etcd episode
		var puts atomic.Int32
		mem := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && slow.Load() > 0 {
				slow.Add(-1)
				// Odd PUTs of the episode are an attempt's first send, even
				// ones client-go's retry of it, which reaches the server.
				if puts.Add(1)%2 == 1 {
					landedServerTimeout(srv, w, r)
					return
				}
			}
			srv.ServeHTTP(w, r)
		}))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		leading := make(chan context.Context, 1)
		cfg, _ := config(t, mem.Config(), "kube-system", "slow-etcd", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- ctx; <-ctx.Done() },
			OnStoppedLeading: func() {},
		})
		// kube-controller-manager's timing: an attempt (5 s) outlasts the
		// Retry-After (2 s) client-go waits before its retry.
		cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod, cfg.AttemptTimeout = 15*time.Second, 10*time.Second, 2*time.Second, 5*time.Second
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		term := <-leading
		time.Sleep(time.Second)
		slow.Store(4) // the fast path's PUT and its retry, the slow path's PUT and its retry

		time.Sleep(3 * cfg.RetryPeriod) // the episode, then a renew that meets a healthy etcd
		synctest.Wait()
		require.Zero(t, slow.Load(), "the episode's four PUTs were sent")
		lease := getLease(ctx, t, mem.Config(), "kube-system", "slow-etcd")
		require.Equal(t, "leader", *lease.Spec.HolderIdentity, "every write landed, each the leader's")
		require.NoError(t, term.Err(), "the leader's term ended: %v", context.Cause(term))
		cancel()
		require.NoError(t, <-done)
	})
}
