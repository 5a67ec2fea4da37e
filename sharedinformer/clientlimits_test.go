package sharedinformer

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/listwatch/informer/internal/testlog"
)

// A server that answers every request with an empty ConfigMap: the rate
// limiter acts in the client before any request is sent, so these tests
// need no API server.
func configMapServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// getConfigMaps sends n GETs through a RESTClient of a factory made with
// cfg, and returns what the factory logged.
func getConfigMaps(t *testing.T, cfg *rest.Config, n int) (log string, f *Factory) {
	var buf testlog.Buffer
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	f, err := NewFactory(cfg, FactoryOptions{Scheme: scheme, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	client, err := f.RESTClient(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	for range n {
		require.NoError(t, client.Get().Namespace("default").Resource("configmaps").Name("web").Do(t.Context()).Error())
	}
	return buf.String(), f
}

func TestTheFactorysClientsAllowQPS50AndBurst100WhenTheConfigLeavesThemZero(t *testing.T) {
	srv := configMapServer(t)
	cfg := &rest.Config{Host: srv.URL}
	log, f := getConfigMaps(t, cfg, 20)
	assert.Equal(t, float32(DefaultQPS), f.cfg.RateLimiter.QPS())
	assert.Equal(t, DefaultBurst, f.cfg.Burst)
	assert.Empty(t, log, "20 requests fit in the burst: nothing waited, nothing to report")
	assert.Zero(t, cfg.QPS, "the caller's config is copied, not modified")
	assert.Nil(t, cfg.RateLimiter, "the caller's config is copied, not modified")
}

func TestTheFactoryKeepsTheClientLimitsTheConfigSets(t *testing.T) {
	srv := configMapServer(t)
	f, err := NewFactory(&rest.Config{Host: srv.URL, QPS: 7, Burst: 3}, FactoryOptions{})
	require.NoError(t, err)
	assert.Equal(t, float32(7), f.cfg.RateLimiter.QPS())
	assert.Equal(t, 3, f.cfg.Burst)

	f, err = NewFactory(&rest.Config{Host: srv.URL, QPS: -1}, FactoryOptions{})
	require.NoError(t, err)
	assert.Nil(t, f.cfg.RateLimiter, "a negative QPS turns the client-side limit off, as in client-go")

	own := flowcontrol.NewTokenBucketRateLimiter(3, 1)
	f, err = NewFactory(&rest.Config{Host: srv.URL, RateLimiter: own}, FactoryOptions{})
	require.NoError(t, err)
	assert.Same(t, own, f.cfg.RateLimiter.(*throttleReporter).RateLimiter, "the caller's limiter, only wrapped to report its waits")
}

func TestTheFactoryLogsWhenRequestsWaitForTheClientsRateLimiter(t *testing.T) {
	srv := configMapServer(t)
	// QPS 2, burst 1: the first request goes at once, each of the next two
	// waits about 500 ms for its token, five times the 100 ms threshold.
	log, _ := getConfigMaps(t, &rest.Config{Host: srv.URL, QPS: 2, Burst: 1}, 3)
	assert.Contains(t, log, `level=WARN msg="sharedinformer: client-side throttling: requests waited for the client's rate limiter before reaching the API server" requests=1`)
	assert.Contains(t, log, `limits="QPS 2, burst 1"`)
	assert.Equal(t, 1, strings.Count(log, "\n"), "one report: the second long wait comes within 10 s of the first")
}
