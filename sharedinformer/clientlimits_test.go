package sharedinformer

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/testenv"
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

// Against a real API server: three requests at once through a factory
// whose client allows one a second. The second and third wait about one
// and two seconds however fast the server answers, since the limiter
// holds them before they are sent; so requests are held back for about
// 2 s, which the factory logs, and each wait reaches the histogram.
func TestThrottledRequestsToARealAPIServerAreLoggedAndMeasured(t *testing.T) {
	cp := testenv.Shared(t)
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1, 1
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	var buf testlog.Buffer
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	f, err := NewFactory(cfg, FactoryOptions{Scheme: scheme, Metrics: reg, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	client, err := f.RESTClient(corev1.SchemeGroupVersion)
	require.NoError(t, err)

	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			assert.NoError(t, client.Get().Namespace("default").Resource("configmaps").Do(t.Context()).Error())
		})
	}
	wg.Wait()

	assert.Contains(t, buf.String(), `level=WARN msg="sharedinformer: client-side throttling`)
	assert.Contains(t, buf.String(), `limits="QPS 1, burst 1"`)
	host := strings.TrimPrefix(cfg.Host, "https://") // host and port, as client-go labels it
	assert.Contains(t, mem.String(), descRateLimiterWait.Name+`{host="`+host+`"} count=3`)
	sum, ok := mem.Sum(descRateLimiterWait.Name, host)
	require.True(t, ok)
	assert.GreaterOrEqual(t, sum, 1.5, "waits of about 0, 1 and 2 s, less what the goroutines took to start")
}
