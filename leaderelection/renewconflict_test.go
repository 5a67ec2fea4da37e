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

// A leader's renew conflicts (a third party, kubectl annotate say, wrote
// the Lease since its last write), its slow path reads the Lease, still
// its own, and its update of that version conflicts again (another such
// write between the GET and the PUT). The term ends (Run's doc: a renew
// that meets another's write twice in one attempt), and its ErrLost
// says the renew conflicted, not that the losing leader holds the Lease.
// (Before, lostTo named the leader's own Lease from that GET: "lease
// kube-system/annotated is held by "leader"".)
func TestALeaderWhoseSlowPathUpdateConflictsDoesNotSayItHoldsTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		adminClient := must(leaderelection.NewClient(admin.Config()))
		annotate := func(n int) {
			lease := getLease(ctx, t, admin.Config(), "kube-system", "annotated")
			if lease.Annotations == nil {
				lease.Annotations = map[string]string{}
			}
			lease.Annotations["example.com/touched"] = time.Now().Format(time.RFC3339Nano) + string(rune('a'+n))
			require.NoError(t, adminClient.Put().Namespace("kube-system").Resource("leases").Name("annotated").
				Body(lease).Do(ctx).Error())
		}

		var armed atomic.Int32 // PUTs of the leader still to be preceded by a third party's write
		leaderMem := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				if n := armed.Add(-1); n >= 0 {
					annotate(int(n))
				}
			}
			srv.ServeHTTP(w, r)
		}))
		leading := make(chan struct{}, 1)
		cfg, _ := config(t, leaderMem.Config(), "kube-system", "annotated", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
		})
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		<-leading
		time.Sleep(time.Second)
		armed.Store(2) // the fast path's PUT and the slow path's PUT each meet a write

		select {
		case err := <-done:
			require.NotContains(t, err.Error(), `held by "leader"`,
				"the leader's ErrLost names the leader itself as the Lease's holder: %v", err)
		case <-time.After(leaseDuration):
			// The term went on: nothing to name.
		}
	})
}
