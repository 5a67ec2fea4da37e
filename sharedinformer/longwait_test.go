package sharedinformer_test

import (
	"log/slog"
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

// A worker whose every request waits 25 s, two windows and more, is held
// back all the time, and warned: the window a long wait began in is
// reported when the wait ends, however late that is. (Found by review:
// no warning at all.)
func TestRequestsThatEachWaitTwoWindowsOrMoreAreReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		lim := &scriptedLimiter{RateLimiter: flowcontrol.NewFakeAlwaysRateLimiter(), waits: make(chan time.Duration, 10)}
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		f, err := si.NewFactory(&rest.Config{Host: "https://apiserver.invalid", RateLimiter: lim, Transport: okTransport{}},
			si.FactoryOptions{Scheme: scheme, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		require.NoError(t, err)
		client, err := f.RESTClient(corev1.SchemeGroupVersion)
		require.NoError(t, err)
		for range 3 {
			lim.waits <- 25 * time.Second
			_ = client.Get().AbsPath("/api/v1/namespaces/x/configmaps/y").Do(t.Context()).Error()
		}
		require.Contains(t, buf.String(), "client-side throttling",
			"three requests in a row, each held back 25 s by the client's own limiter: not one warning")
	})
}
