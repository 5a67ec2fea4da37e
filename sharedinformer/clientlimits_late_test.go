package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/listwatch/informer/internal/testlog"
	si "github.com/listwatch/informer/sharedinformer"
)

// scriptedLimiter's Wait takes the next duration of its script.
type scriptedLimiter struct {
	flowcontrol.RateLimiter
	waits chan time.Duration
}

func (l *scriptedLimiter) Wait(ctx context.Context) error {
	select {
	case d := <-l.waits:
		time.Sleep(d)
	default:
	}
	return nil
}

type okTransport struct{}

func (okTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
}

// scriptedGets returns get, which sends one GET through a factory's
// RESTClient after the client's rate limiter held it back for wait, and
// the buffer the factory logs to. The API server is a transport that
// answers at once. Call it inside a synctest bubble: the waits are
// simulated time.
func scriptedGets(t *testing.T) (get func(wait time.Duration), log *testlog.Buffer) {
	log = &testlog.Buffer{}
	lim := &scriptedLimiter{RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter(), waits: make(chan time.Duration, 10)}
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	f, err := si.NewFactory(&rest.Config{Host: "https://apiserver.invalid", RateLimiter: lim, Transport: okTransport{}},
		si.FactoryOptions{Scheme: scheme, Logger: slog.New(slog.NewTextHandler(log, nil))})
	require.NoError(t, err)
	client, err := f.RESTClient(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	return func(wait time.Duration) {
		lim.waits <- wait
		_ = client.Get().AbsPath("/api/v1/namespaces/x/configmaps/y").Do(t.Context()).Error()
	}, log
}

// Through the factory's public API, in a bubble: a 9 s wait (warned), a
// 2 s wait 3 s after that warning (not warned: one every 10 s), then an
// hour of quiet and one request that does not wait. It brings no
// warning. (Found by review: it brought "heldBack=0% of=1h0m2s".)
func TestAnHourLaterARequestThatDidNotWaitBringsNoWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(9 * time.Second) // 0-9 s: warned
		time.Sleep(time.Second)
		get(2 * time.Second) // 10-12 s: 3 s after the warning, not warned
		time.Sleep(time.Hour)
		before := buf.String()
		get(0) // one request, no wait, an hour later
		after := strings.TrimPrefix(buf.String(), before)
		require.Empty(t, after, "a warning about one request that did not wait, an hour after the last throttling")
	})
}

// A worker whose every request waits 25 s, two windows and more, is held
// back all the time, and warned: the window a long wait began in is
// reported when the wait ends, however late that is. (Found by review:
// no warning at all.)
func TestRequestsThatEachWaitTwoWindowsOrMoreAreReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		for range 3 {
			get(25 * time.Second)
		}
		require.Contains(t, buf.String(), "client-side throttling",
			"three requests in a row, each held back 25 s by the client's own limiter: not one warning")
	})
}

// Two warnings 1 s apart, though docs/15 says "at most one every 10 s":
// a 19.5 s wait is warned when it ends, for the window it began in
// (which ended 9.5 s before), and a 1 s wait right after it, a tenth of
// the next window, was warned at once too, since the last report was
// dated at the end of the window it covered, not when it was made.
func TestAWindowWarnedLateIsFollowedByNoWarningWithinTenSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(19500 * time.Millisecond) // 0-19.5 s: warned at 19.5 s, for the window 0-10 s
		get(time.Second)              // 19.5-20.5 s: a tenth of the next window, 1 s after that warning
		require.Equal(t, 1, strings.Count(buf.String(), "client-side throttling"),
			"warnings 1 s apart, where docs/15 promises at most one every 10 s:\n%s", buf.String())
	})
}

// One wait of 1 s, a tenth of its window, is warned once. It was warned
// when it ended and again when the next request, 10.5 s later, rolled
// its window over: the second warning, dated 10 s after the first, said
// the same wait again ("requests=1 waited=1 longest=1s endedAgo=1.5s"),
// since a report is dated when it is made and the window it had already
// reported was checked again at its end.
func TestAWindowAlreadyWarnedIsNotWarnedAgainWhenItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(time.Second) // 0-1 s: a tenth of the window, warned at 1 s
		time.Sleep(10500 * time.Millisecond)
		get(0) // 11.5 s: the window 0-10 s ends, already warned
		require.Equal(t, 1, strings.Count(buf.String(), "client-side throttling"),
			"one 1 s wait warned twice, for one window:\n%s", buf.String())
	})
}

// A window warned early, at 1.5 s, for a 1.5 s wait, then held back
// for the rest of it and 50 s beyond by one wait of a minute: the
// minute's wait is warned when it ends ("a single wait longer than the
// window is reported when it ends"), 60 s after the only warning, which
// said "longest=1.5s". It went unwarned: the window had been reported,
// and the time after its end is in no window.
func TestALongWaitInAWindowWarnedEarlyIsWarnedWhenItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(1500 * time.Millisecond) // 0-1.5 s: warned at 1.5 s
		get(time.Minute)             // 1.5-61.5 s: held back all the window's rest, and beyond
		require.Equal(t, 2, strings.Count(buf.String(), "client-side throttling"),
			"a minute's wait, ended 60 s after the only warning, never warned:\n%s", buf.String())
		require.Contains(t, buf.String(), "longest=1m0s")
	})
}

// A window warned early, at 1.5 s, then a wait of a minute that begins
// at 9.5 s, half a second before the window ends: the minute's wait is
// a single wait longer than the window, and goes unwarned, since only
// its first half second is in a window.
func TestAMinutesWaitBegunAtTheEndOfAWindowWarnedEarlyIsWarned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(1500 * time.Millisecond) // 0-1.5 s: warned at 1.5 s
		time.Sleep(8 * time.Second)
		get(time.Minute) // 9.5-69.5 s
		require.Equal(t, 2, strings.Count(buf.String(), "client-side throttling"),
			"a minute's wait, ended 68 s after the only warning, never warned:\n%s", buf.String())
	})
}

// The same minute's wait with no warning before it: a request that does
// not wait begins the window at 0 s, the minute's wait begins at 9.5 s.
func TestAMinutesWaitBegunAtTheEndOfAWindowIsWarned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		get, buf := scriptedGets(t)
		get(0)
		time.Sleep(9500 * time.Millisecond)
		get(time.Minute) // 9.5-69.5 s
		require.Equal(t, 1, strings.Count(buf.String(), "client-side throttling"),
			"a minute's wait never warned:\n%s", buf.String())
	})
}
