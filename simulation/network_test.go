package simulation

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Requests that reach a link at one simulated instant are served in an
// order drawn from the seed and the requests themselves, whatever order
// the runtime ran their goroutines in: a replay serves them alike.
func TestRequestsSentTogetherAreServedInAnOrderTheSeedChooses(t *testing.T) {
	served := func(reversed bool) []string {
		var order []string
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			h := newLink(7, 0, nil).serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, r.URL.Path)
			}))
			var wg sync.WaitGroup
			for i := range 8 {
				if reversed {
					i = 7 - i
				}
				path := fmt.Sprintf("/api/v1/namespaces/%s/configmaps/c%d", Namespace, i)
				wg.Go(func() {
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPatch, path, strings.NewReader("{}")))
				})
			}
			wg.Wait()
		})
		return order
	}
	forward, backward := served(false), served(true)
	if len(forward) != 8 || !slices.Equal(forward, backward) {
		t.Errorf("sent in one order, served\n%v\nsent in the other, served\n%v", forward, backward)
	}
}

// A request's fault is drawn from the seed and the request, not from its
// place among the requests that reach the link: requests that race get
// the same faults on every replay.
func TestARequestsFaultDoesNotDependOnTheOrderRequestsArrive(t *testing.T) {
	faults := func(reversed bool) map[string]int {
		l := newLink(7, 0, nil)
		l.set(func(l *link) { l.errP, l.status = 0.5, http.StatusServiceUnavailable })
		out := map[string]int{}
		for i := range 16 {
			if reversed {
				i = 15 - i
			}
			path := fmt.Sprintf("/api/v1/namespaces/%s/configmaps/c%d", Namespace, i)
			out[path] = l.inject(httptest.NewRequest(http.MethodGet, path, nil)).Status
		}
		return out
	}
	forward, backward := faults(false), faults(true)
	failed := 0
	for path, status := range forward {
		if backward[path] != status {
			t.Errorf("%s: %d when the requests came in one order, %d in the other", path, status, backward[path])
		}
		if status != 0 {
			failed++
		}
	}
	if failed == 0 || failed == len(forward) {
		t.Errorf("%d of %d requests met the 50%% error window: the draw is not random", failed, len(forward))
	}
}

// A watch still on the wire when its replica is cut off (a partition or a
// pause begins) is cut with the watches already open: it must not open
// after the cut and stream through the partition.
func TestAWatchOnTheWireWhenTheLinkIsCutNeverOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(7, 0, nil)
		opened := make(chan struct{}, 1)
		h := l.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			default:
				opened <- struct{}{} // served with a live stream
			}
		}))
		path := fmt.Sprintf("/api/v1/namespaces/%s/configmaps?watch=true", Namespace)
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		}()
		synctest.Wait() // the request waits out its time on the wire
		l.cutWatches()
		<-done
		if len(opened) != 0 {
			t.Error("a watch sent before the cut opened after it")
		}
	})
}

// A write's body is read (to draw its faults from it) before the link's
// lock is taken: a body that comes slowly holds up no other request of
// the slot. Inside a bubble a goroutine waiting on a mutex is not
// durably blocked, so a lock held across the read would stop simulated
// time, and the body, waiting on that time, would never come.
func TestASlowBodyHoldsUpNoOtherRequestOfTheSlot(t *testing.T) {
	took := make(chan time.Duration, 1)
	go synctest.Test(t, func(t *testing.T) {
		h := newLink(7, 0, nil).serve(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, _ = io.ReadAll(r.Body) }))
		body, write := io.Pipe()
		go func() {
			_, _ = write.Write([]byte(`{"metadata":`))
			time.Sleep(time.Second) // the rest of the body comes a second later
			_, _ = write.Write([]byte(`{}}`))
			_ = write.Close()
		}()
		patched := make(chan struct{})
		go func() {
			defer close(patched)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPatch, "/api/v1/namespaces/"+Namespace+"/configmaps/slow", body))
		}()
		synctest.Wait() // the PATCH is reading its body
		start := time.Now()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/"+Namespace+"/configmaps/other", nil))
		took <- time.Since(start)
		<-patched
	})
	select {
	case d := <-took:
		if d > maxWire {
			t.Errorf("a GET took %s of simulated time, waiting on another request's body (want ≤ %s)", d, maxWire)
		}
	case <-time.After(30 * time.Second): // a guard: the bubble's time stands still, so it would never come
		t.Fatal("the bubble stalled: a GET waited on the link's lock while a PATCH read a slow body under it")
	}
}

// A Latency window delays a replica's requests, but not its discovery
// requests (a discovery cache's mutex would stop the bubble's clock):
// the two looks of a served check stay BackoffInitial apart, which
// misledWindow counts on.
func TestALatencyWindowDelaysNoDiscoveryRequest(t *testing.T) {
	l := newLink(7, 0, nil)
	l.latency = maxLatency
	for _, path := range []string{"/apis", "/apis/" + CRDGroup + "/v1"} {
		if f := l.inject(httptest.NewRequest(http.MethodGet, path, nil)); f.Latency != 0 {
			t.Errorf("GET %s meets a latency of %v, want none", path, f.Latency)
		}
	}
}
