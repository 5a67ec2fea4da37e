package sharding_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member's renews meet a slow etcd: each PUT of its Lease lands, but
// is answered 500 ServerTimeout with a Retry-After, and a retry of it,
// with the resourceVersion the landed write replaced, 409. Every write is
// the member's own and its Lease names it, renewed: its term goes on, and
// it keeps its id and its objects. (Before, client-go retried the PUT and
// the elector took the retry's 409 on its slow path for another's write:
// the term ended with ErrLost, the Lease was released, and the member
// joined again under a new id, its objects moved away.)
func TestAMemberWhoseLandedRenewsAreAnsweredServerTimeoutKeepsItsID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		var slow, puts atomic.Int32
		memberSide := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && slow.Load() > 0 {
				slow.Add(-1)
				if puts.Add(1)%2 == 1 { // an attempt's PUT; the even ones are client-go's retries
					srv.ServeHTTP(httptest.NewRecorder(), r) // the renew lands
					status := apierrors.NewServerTimeout(schema.GroupResource{Group: coordinationv1.GroupName, Resource: "leases"}, "update", 2).ErrStatus
					status.Kind, status.APIVersion = "Status", "v1"
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Retry-After", "2")
					w.WriteHeader(int(status.Code))
					_ = json.NewEncoder(w).Encode(status)
					return
				}
			}
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(memberSide.Close)
		// The default timing (15 s, 10 s, 2 s): an attempt (5 s) outlasts
		// the Retry-After client-go waits before each retry.
		var mu sync.Mutex
		var started []string
		m := must(sharding.NewMember(sharding.MemberConfig{Client: must(leaderelection.NewClient(memberSide.Config())),
			Namespace: "default", Ring: ring, Name: "zz",
			Run: func(ctx context.Context, shard sharding.Shard) {
				mu.Lock()
				started = append(started, shard.Member)
				mu.Unlock()
				<-ctx.Done()
			}}))
		done := make(chan struct{})
		go func() { defer close(done); _ = m.Run(ctx) }()

		time.Sleep(time.Second) // the member leads
		slow.Store(4)           // the fast path's PUT and its retry, the slow path's PUT and its retry
		time.Sleep(30 * time.Second)
		cancel()
		<-done
		require.Len(t, started, 1, "the member gave up its id over renews that all landed: terms %v", started)
	})
}
