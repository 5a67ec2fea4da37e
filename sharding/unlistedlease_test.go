package sharding_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// strippingCluster is a fake cluster that, once target names a Lease,
// strips that Lease's labels right after each successful write of
// stripUser to it (any user's, for "*"), before the write is answered;
// hook, if set, sees each request (watches aside) with its answer.
type strippingCluster struct {
	*fakeCluster
	inner     http.Handler
	target    atomic.Value // string
	stripUser string
	hook      func(r *http.Request, body []byte, answer *httptest.ResponseRecorder)
}

func newStrippingCluster(t *testing.T, stripUser string) *strippingCluster {
	c := &strippingCluster{inner: fakeapiserver.New(), stripUser: stripUser}
	c.target.Store("")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
			c.inner.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		answer := httptest.NewRecorder()
		c.inner.ServeHTTP(answer, r)
		name := c.target.Load().(string)
		write := r.Method == http.MethodPut || r.Method == http.MethodPost
		ours := c.stripUser == "*" || r.UserAgent() == c.stripUser
		if name != "" && write && ours && answer.Code/100 == 2 && strings.Contains(r.URL.Path, "/leases") &&
			(strings.HasSuffix(r.URL.Path, "/leases/"+name) || bytes.Contains(body, []byte(name))) {
			c.send(http.MethodPatch, name, `{"metadata":{"labels":null}}`)
		}
		if c.hook != nil {
			c.hook(r, body, answer)
		}
		copyRecorded(w, answer)
	})
	net := fakeapiserver.ServeInMemory(handler)
	t.Cleanup(net.Close)
	cfg := fast(net.Config())
	c.fakeCluster = &fakeCluster{ns: "default", cfg: cfg, core: must(testenv.CoreV1Client(cfg))}
	return c
}

// send sends the Lease called name a PATCH (body: a merge patch) or a
// DELETE straight to the server, and returns its status code.
func (c *strippingCluster) send(method, name, body string) int {
	r := httptest.NewRequest(method, "/apis/coordination.k8s.io/v1/namespaces/default/leases/"+name, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/merge-patch+json")
	r.Header.Set("Accept", "application/json")
	answer := httptest.NewRecorder()
	c.inner.ServeHTTP(answer, r)
	return answer.Code
}

// holderOf reads the holder of the Lease called name, "" if it has none
// or is gone.
func (c *strippingCluster) holderOf(ctx context.Context, t *testing.T, name string) string {
	var lease coordinationv1.Lease
	if err := must(leaderelection.NewClient(c.cfg)).Get().Namespace(c.ns).Resource("leases").Name(name).Do(ctx).Into(&lease); err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// blockedWhile answers 503 to cfg's Lease requests while blocked says so.
func blockedWhile(cfg *rest.Config, blocked func() bool) {
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if blocked() && strings.Contains(r.URL.Path, "/leases") {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
			}
			return rt.RoundTrip(r)
		})
	}
}

// Member a renews; its Lease's labels are stripped after each of its
// writes, so the polls never list it and the sharder judges it absent.
// A LeaseDuration on, the takeover's create meets AlreadyExists, and a
// third party (a pruning tool, an admin) deletes the Lease before the
// sharder reads it by name; a's Lease requests fail for a second, well
// within its RenewDeadline. The read's 404 left the old absence, already
// expired, in place, and the next create landed: a live member taken
// over, its objects moved without a drain.
//
// Passing: the 404 restarts the absence, so a, which puts its Lease back
// within a second, is never taken over and nothing moves off it.
func TestALiveMemberWhoseUnlistedLeaseIsDeletedBeforeItIsReadIsNotTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newStrippingCluster(t, "replica-a")
		var deleted atomic.Bool
		var blockedUntil atomic.Int64 // unix nanos
		c.hook = func(r *http.Request, body []byte, answer *httptest.ResponseRecorder) {
			name := c.target.Load().(string)
			creating := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases")
			if name == "" || r.UserAgent() == "replica-a" || !creating {
				return
			}
			if answer.Code == http.StatusConflict && bytes.Contains(body, []byte(name)) && !deleted.Load() {
				deleted.Store(true)
				require.Equal(t, http.StatusOK, c.send(http.MethodDelete, name, ""))
				blockedUntil.Store(time.Now().Add(time.Second).UnixNano())
			}
		}
		aCfg := c.as("replica-a")
		blockedWhile(aCfg, func() bool { return time.Now().UnixNano() < blockedUntil.Load() })
		m := joinTwo(t, c.fakeCluster, aCfg, 20)
		a, ctx := m.a, m.ctx
		moved := count(m.labels, "move")

		name := sharding.LeaseName(ring, a)
		c.target.Store(name)
		for end := time.Now().Add(leaseDuration + 8*retryPeriod); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			h := c.holderOf(ctx, t, name)
			require.True(t, h == "" || h == a, "live member %s taken over: its Lease names %s", a, h)
		}
		c.target.Store("")
		require.True(t, deleted.Load(), "the takeover's create met AlreadyExists and the Lease was deleted before the read")
		require.Equal(t, moved, count(m.labels, "move"), "objects moved off the live member %s", a)
		requireNoOverlap(t, m.rec)
	})
}

// Member a is cut off; something strips its Lease's labels after each
// write, the sharder's takeover included. The takeover made a dead for
// certain; the next poll, not listing the Lease stripped again, marked
// it absent, and a's objects not moved yet waited, "not seen alive", for
// another LeaseDuration and another create.
//
// Passing: once taken over, a stays dead for certain, and its objects
// all move within a LeaseDuration of the takeover, though the sharder's
// label writes take a while each; and its Lease, owning nothing, is
// collected, though the strip changed the version collection's delete
// was guarded by (it was refused 409 for ever).
func TestATakenOverLeaseStrippedOfItsLabelsAgainStaysDeadForCertain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newStrippingCluster(t, "*")
		var cut atomic.Bool
		var tookOver atomic.Int64 // unix nanos
		c.hook = func(r *http.Request, body []byte, answer *httptest.ResponseRecorder) {
			name := c.target.Load().(string)
			if name != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+name) &&
				answer.Code == http.StatusOK && r.UserAgent() != "replica-a" {
				tookOver.CompareAndSwap(0, time.Now().UnixNano())
			}
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/configmaps/") && r.UserAgent() != "replica-a" {
				time.Sleep(300 * time.Millisecond) // the sharder's label PATCHes take a while: many objects, a client QPS
			}
		}
		aCfg := c.as("replica-a")
		blockedWhile(aCfg, cut.Load)
		m := joinTwo(t, c.fakeCluster, aCfg, 20)
		defer func() { m.stop(); time.Sleep(time.Second) }() // the hook's sleeps end too
		a, ctx, ns, guard := m.a, m.ctx, c.ns, time.Minute

		cut.Store(true)
		synctest.Wait()
		name := sharding.LeaseName(ring, a)
		c.target.Store(name)
		c.send(http.MethodPatch, name, `{"metadata":{"labels":null}}`)
		for start := time.Now(); tookOver.Load() == 0; time.Sleep(10 * time.Millisecond) {
			require.Less(t, time.Since(start), guard, "a was never taken over")
		}
		at := time.Unix(0, tookOver.Load())
		shard := sharding.Shard{Ring: ring}
		for {
			left := 0
			for _, cm := range listConfigMaps(ctx, t, c.core, ns) {
				if cm.Labels[shard.Label()] == a {
					left++
				}
			}
			if left == 0 {
				break
			}
			require.Less(t, time.Since(at), leaseDuration, "%d objects still on the dead member %s", left, a)
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(3 * leaseDuration) // collection runs once a LeaseDuration
		require.Equal(t, http.StatusNotFound, c.send(http.MethodGet, name, ""), "the dead member %s's Lease, owning nothing, was never collected", a)
	})
}
