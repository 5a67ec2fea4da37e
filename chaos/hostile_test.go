package chaos_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/reflector"
)

// A watch that fails the same way forever, seen through a whole informer:
// each failure reaches the informer's OnError as a *reflector.Error that
// says what happened, the WATCHes come no faster than the backoff allows,
// there is no relist (the resourceVersion is still good), nothing reaches
// the handler, and the next good watch carries on from where it was.
func TestHostileWatchesAreReportedRetriedAtABoundedRateAndRecoveredFrom(t *testing.T) {
	// 17 MiB of data: more than client-go's watch decoder accepts in one
	// event (16 MiB), where a LIST has no such limit.
	huge := cm("huge", "11")
	huge["data"] = map[string]any{"blob": strings.Repeat("x", 17<<20)}
	hugeEvent := event("ADDED", huge) + "\n"
	errorEvent := func(code int, reason metav1.StatusReason) string {
		return event("ERROR", statusObject(code, reason, "the hostile server says no")) + "\n"
	}
	// As kube-apiserver's max-in-flight and priority-and-fairness filters
	// answer: the wait in the header, a plain-text body.
	tooMany := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintln(w, "Too many requests, please try again later.")
	}
	for _, c := range []struct {
		name     string
		watch    http.HandlerFunc
		reported func(error) bool
		minGap   time.Duration // the least time between two WATCHes, when the server sets it
	}{
		{"an object too large to decode", raw(http.StatusOK, hugeEvent), func(err error) bool {
			return strings.Contains(err.Error(), "maximum allowed size")
		}, 0},
		{"an ERROR event 401 Unauthorized", raw(http.StatusOK, errorEvent(http.StatusUnauthorized, metav1.StatusReasonUnauthorized)), apierrors.IsUnauthorized, 0},
		{"an ERROR event 429 Too Many Requests", raw(http.StatusOK, errorEvent(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)), apierrors.IsTooManyRequests, 0},
		{"an ERROR event 504 Timeout", raw(http.StatusOK, errorEvent(http.StatusGatewayTimeout, metav1.StatusReasonTimeout)), apierrors.IsTimeout, 0},
		{"429 with Retry-After: 1", tooMany, apierrors.IsTooManyRequests, 950 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Each case has a server and an informer of its own, and every
			// bound below holds however slow the machine: the count of
			// WATCHes in the window is bounded from above, the gaps from
			// below. So the cases run side by side.
			t.Parallel()
			s := newServer(t, pagedList("10", 0, cm("a", "9")), c.watch)
			inf, v, errs := hostileInformer(t, s, 0)
			time.Sleep(hostileWindow + 300*time.Millisecond)
			// A 17 MiB event takes a while to send and refuse under -race
			// (seconds an attempt, beside the other cases).
			eventually(t, func() bool { return len(errs.all()) >= 3 }, "it does not keep retrying")

			watches := s.Requests(true)
			require.NotEmpty(t, watches)
			n := within(watches, watches[0], hostileWindow)
			assert.LessOrEqual(t, n, maxAttempts(hostileWindow, max(hostileInitial, c.minGap), hostileMax), "WATCHes in %v: the backoff bounds the rate", hostileWindow)
			for i := 1; i < len(watches); i++ {
				assert.GreaterOrEqual(t, watches[i].Sub(watches[i-1]), c.minGap, "the server's Retry-After is honoured")
			}
			assert.Len(t, s.Requests(false), 1, "no relist: the resourceVersion is still good")
			reported := errs.all()
			// watches was read before reported, and each attempt's failure is
			// reported before the next WATCH: all but the last are in reported
			// however long the test waited between the two reads.
			assert.GreaterOrEqual(t, len(reported), len(watches)-1, "every failed attempt is reported")
			for _, err := range reported {
				var re *reflector.Error
				if assert.ErrorAs(t, err, &re) {
					assert.Equal(t, reflector.KindWatch, re.Op, "%v", err)
					assert.Equal(t, "10", re.ResourceVersion, "it says where it watched from")
				}
				assert.True(t, c.reported(err), "unexpected error: %v", err)
			}
			live, _ := v.state()
			assert.Equal(t, map[string]string{"ns/a": "9"}, live)

			s.Answer(nil, s.HoldOpen(event("ADDED", cm("b", "11"))))
			// Guards against hanging: an attempt already sending the 17 MiB
			// event runs to its end first.
			eventually(t, func() bool { return inf.LastSyncResourceVersion() == "11" }, "no recovery")
			eventually(t, func() bool { live, _ := v.state(); return len(live) == 2 }, "the handler never saw b")
			live, violations := v.state()
			assert.Equal(t, map[string]string{"ns/a": "9", "ns/b": "11"}, live)
			assert.Empty(t, violations)
		})
	}
}

// A connection reset half-way through the second page of a relist: the
// list fails and starts over after the backoff. The first page of each
// cut list reaches the cache (a relist is handed over in parts), and so
// does every item of the cut page that arrived whole before the reset: a,
// b and c move to their newer versions, and f, cut in half, is not added.
// Nothing is deleted on the word of a list that did not finish: d and e,
// which only the lost half could have dropped, stay as the last complete
// list had them. The next complete list then replaces it all.
func TestAResetInTheMiddleOfAListPageLeavesTheCacheWholeUntilAListCompletes(t *testing.T) {
	old := []map[string]any{cm("a", "1"), cm("b", "2"), cm("c", "3"), cm("d", "4"), cm("e", "5")}
	s := newServer(t, pagedList("10", 0, old...), nil)
	s.Answer(nil, s.HoldOpen())
	inf, v, errs := hostileInformer(t, s, 2)
	eventually(t, func() bool { return inf.HasSynced() }, "never synced")
	eventually(t, func() bool { live, _ := v.state(); return len(live) == 5 }, "the handler never got the list")

	// Now the watch is gone (410, a relist) and page 2 of every list is cut.
	listsBefore := len(s.Requests(false))
	s.Answer(pagedList("20", 2, cm("a", "11"), cm("b", "12"), cm("c", "13"), cm("f", "14")),
		raw(http.StatusOK, event("ERROR", statusObject(http.StatusGone, metav1.StatusReasonExpired, "too old resource version"))+"\n"))
	// Cut the open watch, so the next one gets the 410.
	s.CloseClientConnections()
	// Two requests (pages 1 and 2) per attempt: two cut lists at least,
	// however slowly a loaded machine makes them.
	eventually(t, func() bool { return len(s.Requests(false)) >= listsBefore+4 }, "it does not keep retrying")
	lists := s.Requests(false)[listsBefore:]
	// Let the window from the first relist pass, so the upper bound below
	// is checked over all of it; a slow machine only makes fewer requests.
	time.Sleep(time.Until(lists[0].Add(hostileWindow + 300*time.Millisecond)))

	lists = s.Requests(false)[listsBefore:]
	n := within(lists, lists[0], hostileWindow)
	// The first relist after a 410 is immediate.
	assert.LessOrEqual(t, n, 2*(1+maxAttempts(hostileWindow, hostileInitial, hostileMax)), "LISTs in %v: the backoff bounds the rate", hostileWindow)
	failedLists := 0
	for _, err := range errs.all() {
		var re *reflector.Error
		require.ErrorAs(t, err, &re)
		if re.Op == reflector.KindList {
			failedLists++
		}
	}
	assert.GreaterOrEqual(t, failedLists, n/2-1, "every cut list is reported")
	partial := map[string]string{"ns/a": "11", "ns/b": "12", "ns/c": "13", "ns/d": "4", "ns/e": "5"}
	eventually(t, func() bool { return fmt.Sprint(cacheRVs(inf)) == fmt.Sprint(partial) },
		"the cache holds the newer versions that arrived whole and every key of the last complete list")
	eventually(t, func() bool { live, _ := v.state(); return fmt.Sprint(live) == fmt.Sprint(partial) },
		"the handler was told of the newer versions and of no deletion")
	assert.Zero(t, v.deletes.Load())

	s.Answer(pagedList("20", 0, cm("a", "11"), cm("b", "12"), cm("c", "13"), cm("f", "14")), s.HoldOpen())
	newState := map[string]string{"ns/a": "11", "ns/b": "12", "ns/c": "13", "ns/f": "14"}
	eventually(t, func() bool { live, _ := v.state(); return fmt.Sprint(live) == fmt.Sprint(newState) }, "no recovery")
	assert.Equal(t, newState, cacheRVs(inf))
	assert.Equal(t, int64(2), v.unknownDeletes.Load(), "d and e, gone while not watched, were deleted with final state unknown")
	_, violations := v.state()
	assert.Empty(t, violations)
}

// A server that ends every watch at once, each time after a bookmark
// that advances the resourceVersion. Each watch made progress, so none is
// a "short watch" failure; the reflector must still not re-watch in a
// tight loop.
func TestWatchesThatEndAtOnceAfterProgressAreNotReopenedInATightLoop(t *testing.T) {
	var rv atomic.Int64
	rv.Store(10)
	s := newServer(t, pagedList("10", 0, cm("a", "9")), func(w http.ResponseWriter, _ *http.Request) {
		next := rv.Add(1)
		bookmark := map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": fmt.Sprint(next)}}
		raw(http.StatusOK, event("BOOKMARK", bookmark)+"\n")(w, nil)
	})
	inf, _, _ := hostileInformer(t, s, 0)
	eventually(t, func() bool { return inf.HasSynced() }, "never synced")
	time.Sleep(hostileWindow + 300*time.Millisecond)

	watches := s.Requests(true)
	require.NotEmpty(t, watches)
	n := within(watches, watches[0], hostileWindow)
	// The bound allowed here is loose on purpose: a backoff, or any pause
	// of the order of the ShortWatch, gives a handful; a tight loop gives
	// hundreds or thousands.
	assert.LessOrEqual(t, n, 50, "WATCHes in %v against a server that ends each at once", hostileWindow)
	t.Logf("%d WATCHes in %v", n, hostileWindow)
}

// A watch event whose resourceVersion is older than the list the reflector
// holds: the server went back in time (an etcd restored from a backup, a
// misbehaving proxy). The handler must not be told the state went
// backwards without anyone knowing: the reflector reports it.
func TestAResourceVersionThatGoesBackwardsIsReported(t *testing.T) {
	s := newServer(t, pagedList("10", 0, cm("a", "9")), nil)
	s.Answer(nil, s.HoldOpen(event("MODIFIED", cm("a", "5"))))
	inf, v, errs := hostileInformer(t, s, 0)
	eventually(t, func() bool { return inf.HasSynced() }, "never synced")
	eventually(t, func() bool { return len(errs.all()) > 0 },
		"a resourceVersion going from 10 to 5 is never reported")

	reported := errs.all()
	_, violations := v.state()
	t.Logf("handler: %v; errors: %v", violations, reported)

	// Recovery: the server moves forward again.
	s.Answer(nil, s.HoldOpen(event("MODIFIED", cm("a", "12"))))
	s.CloseClientConnections()
	eventually(t, func() bool { return fmt.Sprint(cacheRVs(inf)) == "map[ns/a:12]" }, "no recovery: %v", cacheRVs(inf))
}

// An object larger than any real server would store (etcd's limit is
// 1.5 MiB) in a LIST: the client has no size limit on a LIST, so it is
// accepted and cached whole, not truncated and not refused.
func TestAnOversizedObjectInAListIsCachedWhole(t *testing.T) {
	big := cm("big", "9")
	big["data"] = map[string]any{"blob": strings.Repeat("y", 3<<20)}
	s := newServer(t, pagedList("10", 0, big), nil)
	s.Answer(nil, s.HoldOpen())
	inf, v, errs := hostileInformer(t, s, 0)
	eventually(t, func() bool { return inf.HasSynced() }, "never synced")
	got, err := inf.Lister().Namespace("ns").Get("big")
	require.NoError(t, err)
	assert.Len(t, got.Data["blob"], 3<<20)
	assert.Empty(t, errs.all())
	eventually(t, func() bool { live, _ := v.state(); return len(live) == 1 }, "the handler never got it")
}
