package sharding_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// stripAfterWrites wraps the fake so that, once the returned lease name
// is set, each write of user to that Lease is followed by a merge patch
// stripping the Lease's labels, before the write's answer (delay 0) or
// delay after it: a label-enforcing controller (or a drift-correcting
// GitOps tool) that reacts faster than the sharder polls.
func stripAfterWrites(t *testing.T, user string, delay time.Duration, pending *sync.WaitGroup) (*fakeCluster, *atomic.Value, *atomic.Int64) {
	var target atomic.Value
	target.Store("")
	var strips atomic.Int64
	inner := fakeapiserver.New()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := target.Load().(string)
		write := r.Method == http.MethodPut || r.Method == http.MethodPost
		if name == "" || !write || r.UserAgent() != user || !strings.Contains(r.URL.Path, "/leases") {
			inner.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		if rec.Code/100 == 2 && strings.HasSuffix(r.URL.Path, "/leases/"+name) {
			strip := func() {
				p := httptest.NewRequest(http.MethodPatch, "/apis/coordination.k8s.io/v1/namespaces/default/leases/"+name,
					bytes.NewBufferString(`{"metadata":{"labels":null}}`))
				p.Header.Set("Content-Type", "application/merge-patch+json")
				p.Header.Set("Accept", "application/json")
				pr := httptest.NewRecorder()
				inner.ServeHTTP(pr, p)
				if pr.Code == http.StatusOK {
					strips.Add(1)
				}
			}
			if delay == 0 {
				strip()
			} else {
				pending.Go(func() {
					time.Sleep(delay)
					if target.Load().(string) == name {
						strip()
					}
				})
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
	net := fakeapiserver.ServeInMemory(handler)
	t.Cleanup(net.Close)
	cfg := fast(net.Config())
	return &fakeCluster{ns: "default", cfg: cfg, core: must(testenv.CoreV1Client(cfg))}, &target, &strips
}

// Member a is alive and renews every RetryPeriod; each of its writes
// puts both ring labels back, and something strips them again right
// after each (at once, or 50 ms later as a controller reacting to a watch
// would), before the sharder's next poll. The polls never see the Lease,
// so it is absent for a LeaseDuration; the takeover's create meets
// AlreadyExists. Taking over the Lease the read by name then found,
// guarded only by that fresh version, took over a member that had
// renewed a RetryPeriod before, and two members reconciled one key.
//
// Passing: the Lease read by name is judged by its version, which a's
// renews keep changing, so a is never taken over, no object moves off
// it, and no key is reconciled by two members at once.
func TestALiveMemberWhoseLabelsAreStrippedAfterEachWriteIsNotTakenOver(t *testing.T) {
	for name, delay := range map[string]time.Duration{"at once": 0, "50ms after each write": 50 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var pending sync.WaitGroup
				c, target, strips := stripAfterWrites(t, "replica-a", delay, &pending)
				defer pending.Wait()
				defer target.Store("")
				m := joinTwo(t, c, c.as("replica-a"), 20)
				moved := count(m.labels, "move")

				target.Store(sharding.LeaseName(ring, m.a))
				time.Sleep(leaseDuration + 8*retryPeriod)
				t.Logf("strips after a's writes: %d", strips.Load())
				require.Positive(t, strips.Load(), "a's renews were stripped")
				require.Equal(t, moved, count(m.labels, "move"), "objects moved off the live member %s", m.a)
				requireNoOverlap(t, m.rec)
			})
		})
	}
}
