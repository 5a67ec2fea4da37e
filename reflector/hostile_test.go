package reflector_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/internal/hostile"
	"github.com/listwatch/informer/reflector"
)

// The hostile tests run in synctest bubbles, on simulated time: the
// window over which a failing server's request count is checked against
// what the backoff allows, and the counts themselves, are exact.
const hostileWindow = 1500 * time.Millisecond

func anyError(err error) bool { return err != nil }

func TestHostileListAnswersAreReportedRetriedAtABoundedRateAndRecoveredFrom(t *testing.T) {
	wrongKind := func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"kind": "SecretList", "apiVersion": "v1",
			"metadata": map[string]any{"resourceVersion": "10"},
			"items":    []any{object("Secret", "s", "9")},
		})
	}
	noRV := func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "items": []any{}})
	}
	for _, c := range []struct {
		name     string
		answer   http.HandlerFunc
		reported func(error) bool
	}{
		{"truncated JSON", raw(http.StatusOK, "application/json", `{"kind":"ConfigMapList","items":[{`), anyError},
		{"not JSON at all", raw(http.StatusOK, "application/json", "<html>hello</html>"), anyError},
		{"a list of the wrong kind", wrongKind, is(reflector.ErrUnexpectedObject)},
		{"a list without a resourceVersion", noRV, is(reflector.ErrNoResourceVersion)},
		{"403 Forbidden", status(http.StatusForbidden, metav1.StatusReasonForbidden), apierrors.IsForbidden},
		{"404 Not Found", status(http.StatusNotFound, metav1.StatusReasonNotFound), apierrors.IsNotFound},
		{"500 Internal Error", status(http.StatusInternalServerError, metav1.StatusReasonInternalError), apierrors.IsInternalError},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHostileServer(t)
				s.Answer(c.answer, nil)
				store, errs, r := hostileReflector(t, s, nil)
				time.Sleep(hostileWindow)
				synctest.Wait()

				lists := s.Requests(false)
				require.NotEmpty(t, lists)
				n := within(lists, lists[0], hostileWindow)
				assert.Equal(t, maxAttempts(hostileWindow, hostileInitial, hostileMax), n,
					"LISTs in %v: one per backoff step, so the backoff bounds the rate and the retries go on", hostileWindow)
				reported := errs.all()
				assert.Len(t, reported, len(lists), "every failed attempt is reported")
				for _, err := range reported {
					assert.True(t, c.reported(err), "unexpected error: %v", err)
					var e *reflector.Error
					assert.ErrorAs(t, err, &e)
					assert.Equal(t, reflector.KindList, e.Op)
				}
				assert.Zero(t, store.count("replace"), "nothing reached the store")

				s.Answer(goodList, nil)
				time.Sleep(hostileMax) // the longest wait the backoff has left
				synctest.Wait()
				assert.Equal(t, "10", r.LastSyncResourceVersion(), "recovered on the next attempt")
				assert.Equal(t, map[string]string{"ns/a": "9"}, store.state())
			})
		})
	}
}

func TestHostileWatchAnswersAreReportedRetriedAtABoundedRateWithoutRelisting(t *testing.T) {
	errorEvent := event("ERROR", statusObject(http.StatusInternalServerError, metav1.StatusReasonInternalError, "etcd is sad")) + "\n"
	for _, c := range []struct {
		name     string
		answer   http.HandlerFunc
		reported func(error) bool
	}{
		{"closes at once, forever", raw(http.StatusOK, "application/json", ""), is(reflector.ErrShortWatch)},
		{"garbage on the stream", raw(http.StatusOK, "application/json", "this is not JSON\n"), anyError},
		{"an ERROR event that is not 410", raw(http.StatusOK, "application/json", errorEvent), apierrors.IsInternalError},
		{"an ERROR event without a Status", raw(http.StatusOK, "application/json", event("ERROR", object("ConfigMap", "x", "1"))+"\n"), is(reflector.ErrUnexpectedObject)},
		{"503 Service Unavailable", status(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable), apierrors.IsServiceUnavailable},
		{"403 Forbidden", status(http.StatusForbidden, metav1.StatusReasonForbidden), apierrors.IsForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHostileServer(t)
				s.Answer(nil, c.answer)
				store, errs, r := hostileReflector(t, s, nil)
				time.Sleep(hostileWindow)
				synctest.Wait()

				watches := s.Requests(true)
				require.NotEmpty(t, watches)
				n := within(watches, watches[0], hostileWindow)
				assert.Equal(t, maxAttempts(hostileWindow, hostileInitial, hostileMax), n,
					"WATCHes in %v: one per backoff step, so the backoff bounds the rate and the retries go on", hostileWindow)
				assert.Len(t, s.Requests(false), 1, "a failing watch is retried from its resourceVersion: no relist")
				reported := errs.all()
				assert.Len(t, reported, len(watches), "every failed attempt is reported")
				for _, err := range reported {
					assert.True(t, c.reported(err), "unexpected error: %v", err)
				}

				s.Answer(nil, s.HoldOpen(event("ADDED", object("ConfigMap", "b", "11"))))
				time.Sleep(hostileMax) // the longest wait the backoff has left
				synctest.Wait()
				assert.Equal(t, "11", r.LastSyncResourceVersion(), "recovered on the next attempt")
				assert.Equal(t, map[string]string{"ns/a": "9", "ns/b": "11"}, store.state())
			})
		})
	}
}

func TestWrongKindInAWatchEventIsReportedAndSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHostileServer(t)
		s.Answer(nil, s.HoldOpen(
			event("ADDED", object("Secret", "s", "11")),
			event("ADDED", object("ConfigMap", "b", "12")),
		))
		store, errs, r := hostileReflector(t, s, nil)
		synctest.Wait()
		assert.Equal(t, "12", r.LastSyncResourceVersion(), "the good event arrived")
		assert.Equal(t, 1, errs.count(is(reflector.ErrUnexpectedObject)), "%v", errs.all())
		assert.Equal(t, map[string]string{"ns/a": "9", "ns/b": "12"}, store.state())
		assert.Len(t, s.Requests(true), 1, "the watch went on")
	})
}

// rest retries a 429 with Retry-After up to 10 times on its own, sleeping
// in between. The reflector turns that off: each attempt is one request,
// each failure is reported, and the server's Retry-After is the minimum
// wait before the next attempt.
func TestRetryAfterIsHonouredAndEachAttemptIsOneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHostileServer(t)
		var answered atomic.Int32
		s.Answer(func(w http.ResponseWriter, r *http.Request) {
			if answered.Add(1) <= 2 {
				w.Header().Set("Retry-After", "1")
				raw(http.StatusTooManyRequests, "text/plain", "slow down")(w, r)
				return
			}
			goodList(w, r)
		}, nil)
		_, errs, r := hostileReflector(t, s, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.BackoffInitial = 10 * time.Millisecond
		})
		time.Sleep(2 * time.Second) // two Retry-Afters of 1 s
		synctest.Wait()
		require.Equal(t, "10", r.LastSyncResourceVersion(), "listed after the second Retry-After")

		lists := s.Requests(false)
		require.Len(t, lists, 3, "one request per attempt")
		assert.Equal(t, 2, errs.count(apierrors.IsTooManyRequests), "both 429s were reported")
		for i := 1; i < len(lists); i++ {
			assert.Equal(t, time.Second, lists[i].Sub(lists[i-1]), "Retry-After: 1 beats the 10ms backoff")
		}
	})
}

// A first 410 relists at once; a 410 again before any watch has worked
// waits for the backoff, so a server that answers 410 to every watch gets
// a bounded number of LISTs, not a loop.
func TestAServerThatAnswers410ToEveryWatchCannotMakeTheReflectorListInALoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHostileServer(t)
		gone := event("ERROR", statusObject(http.StatusGone, metav1.StatusReasonExpired, "too old resource version: 10 (11)")) + "\n"
		s.Answer(nil, raw(http.StatusOK, "application/json", gone))
		_, errs, _ := hostileReflector(t, s, nil)
		time.Sleep(hostileWindow)
		synctest.Wait()

		lists := s.Requests(false)
		n := within(lists, lists[0], hostileWindow)
		// The first list, the immediate relist, then one per backoff wait.
		assert.Equal(t, 1+maxAttempts(hostileWindow, hostileInitial, hostileMax), n, "LISTs in %v", hostileWindow)
		assert.Equal(t, len(lists), errs.count(apierrors.IsResourceExpired), "each list's watch got its 410")
		for i := 2; i < len(lists); i++ {
			assert.GreaterOrEqual(t, lists[i].Sub(lists[i-1]), hostileInitial, "relist %d waited the backoff", i)
		}
	})
}

// Servers without the WatchList feature refuse sendInitialEvents with 422;
// a server that ignores it sends no end bookmark and the stream just ends,
// every time (StreamEndedLimit times, where a single end would be a cut).
// Either way the reflector lists instead, and keeps listing.
func TestStreamingListFallsBackToListAgainstAServerThatRefusesIt(t *testing.T) {
	for _, c := range []struct {
		name     string
		refusal  http.HandlerFunc
		reported func(error) bool
		times    int
	}{
		{"422 Invalid", status(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid), nil, 0},
		{"a stream without the end bookmark", raw(http.StatusOK, "application/json", event("ADDED", object("ConfigMap", "a", "9"))+"\n"), is(reflector.ErrStreamEnded), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newHostileServer(t)
				hold := s.HoldOpen()
				s.Answer(nil, func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Query().Get("sendInitialEvents") == "true" {
						c.refusal(w, r)
						return
					}
					hold(w, r)
				})
				trace := &traceLog{}
				store, errs, r := hostileReflector(t, s, func(o *reflector.Options[*corev1.ConfigMap]) {
					o.StreamingList = true
					o.Trace = trace.hook
				})
				time.Sleep(time.Second) // past the backoff after each ended stream
				synctest.Wait()
				assert.Equal(t, "10", r.LastSyncResourceVersion(), "synced")
				assert.Len(t, s.Requests(false), 1, "one LIST instead")
				fallbacks := trace.of(reflector.KindFallback)
				require.Len(t, fallbacks, 1)
				if c.reported != nil { // no refusal: the detail says why it fell back
					assert.Contains(t, fallbacks[0].Detail, "3 streaming lists ended early")
				}
				assert.Equal(t, map[string]string{"ns/a": "9"}, store.state())
				if c.reported == nil {
					assert.Empty(t, errs.all(), "a refusal is an answer, not a failure")
				} else {
					assert.Equal(t, c.times, errs.count(c.reported), "%v", errs.all())
				}
			})
		})
	}
}

// A watch that ends at once after moving the resourceVersion forward made
// progress: it is no failure and waits no backoff, so a reflector catching
// up through a flapping connection is not slowed down more and more.
func TestAShortWatchThatMovedTheResourceVersionIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newHostileServer(t)
		s.Answer(nil, hostile.OneEventThenClose)
		_, errs, r := hostileReflector(t, s, nil)
		time.Sleep(time.Second)
		synctest.Wait()
		rv, _ := strconv.Atoi(r.LastSyncResourceVersion())
		assert.GreaterOrEqual(t, rv, 20, "each one-event watch moves the resourceVersion forward")
		assert.Zero(t, errs.count(is(reflector.ErrShortWatch)), "no watch that delivered progress is a failure: %v", errs.all())
	})
}

// The same server cannot make the reflector spin: re-watches are rate
// limited (RewatchQPS, RewatchBurst), not backed off.
func TestAServerThatClosesEveryWatchAfterOneEventCannotMakeTheReflectorSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const qps, burst = 10, 5
		s := newHostileServer(t)
		s.Answer(nil, hostile.OneEventThenClose)
		hostileReflector(t, s, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.RewatchQPS, o.RewatchBurst = qps, burst
		})
		time.Sleep(hostileWindow)
		synctest.Wait()

		watches := s.Requests(true)
		require.NotEmpty(t, watches)
		n := within(watches, watches[0], hostileWindow)
		// A token bucket allows burst + qps*t requests in any t, and on
		// simulated time the reflector takes each token as it comes.
		// Without the limit it would be thousands.
		allowed := burst + int(qps*hostileWindow.Seconds())
		t.Logf("%d WATCHes in %v (allowed %d)", n, hostileWindow, allowed)
		assert.Equal(t, allowed, n, "the rate limit bounds the re-watches, and does not stop them")
	})
}
