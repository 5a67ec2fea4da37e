package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
)

// descRecorder is a metrics.Provider that keeps the Desc and label
// values of every histogram asked for, and hands the series of a Memory.
type descRecorder struct {
	*metrics.Memory
	mu         sync.Mutex
	histograms map[string]metrics.Desc
	values     map[string][]string
}

func newDescRecorder() *descRecorder {
	return &descRecorder{Memory: metrics.NewMemory(), histograms: map[string]metrics.Desc{}, values: map[string][]string{}}
}

func (p *descRecorder) Histogram(d metrics.Desc, labelValues []string) (metrics.Histogram, error) {
	p.mu.Lock()
	p.histograms[d.Name], p.values[d.Name] = d, labelValues
	p.mu.Unlock()
	return p.Memory.Histogram(d, labelValues)
}

const rateLimiterWait = "rest_client_rate_limiter_duration_seconds"

// Every client a factory makes takes its tokens from one bucket. At QPS 1
// and burst 1, no two requests reach the server within a second of each
// other, whichever client sent them: the factory's discovery, two
// RESTClients of different group-versions, the informer's list. With a
// bucket per client, each client's first request would go out at once,
// beside another client's. Every request's wait is one observation in the
// one histogram. A watch is the exception: client-go's rest never
// rate-limits one (Request.Watch), so it neither waits nor is observed. On the fake API server in a synctest
// bubble, so the seconds are simulated and exact.
func TestEveryClientAFactoryMakesSharesOneRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var mu sync.Mutex
		var arrivals []time.Time // of every request but a watch
		watches := 0
		mem := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if r.URL.Query().Get("watch") == "true" {
				watches++
			} else {
				arrivals = append(arrivals, time.Now())
			}
			mu.Unlock()
			srv.ServeHTTP(w, r)
		}))
		defer mem.Close()
		cfg := mem.Config()
		cfg.QPS, cfg.Burst = 1, 1
		provider := newDescRecorder()
		reg, err := metrics.NewRegistry(provider)
		require.NoError(t, err)
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		require.NoError(t, coordinationv1.AddToScheme(scheme))
		f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme, Metrics: reg,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer f.Wait()
		defer cancel()

		core, err := f.RESTClient(corev1.SchemeGroupVersion)
		require.NoError(t, err)
		leases, err := f.RESTClient(coordinationv1.SchemeGroupVersion)
		require.NoError(t, err)
		require.NoError(t, core.Get().Namespace("default").Resource("configmaps").Do(ctx).Error())
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Do(ctx).Error())
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx, inf))
		time.Sleep(10 * time.Second) // simulated: the watch's turn comes
		synctest.Wait()

		mu.Lock()
		got, watched := slices.Clone(arrivals), watches
		mu.Unlock()
		require.GreaterOrEqual(t, len(got), 4, "two GETs, discovery and a list")
		require.Equal(t, 1, watched, "the informer's watch, which client-go's rest never rate-limits")
		for i := 1; i < len(got); i++ {
			// rate.Limiter counts tokens in float64: a nanosecond may go
			// astray, not a second.
			assert.GreaterOrEqual(t, got[i].Sub(got[i-1]), time.Second-time.Millisecond,
				"requests %d and %d of %d reached the server %v apart", i, i+1, len(got), got[i].Sub(got[i-1]))
		}
		observed, ok := provider.Value(rateLimiterWait, provider.values[rateLimiterWait]...)
		require.True(t, ok)
		assert.Equal(t, float64(len(got)), observed, "one wait observed per request sent")
	})
}

// The wait histogram is client-go's: its name and buckets, those of
// k8s.io/component-base/metrics/prometheus/restclient (v0.37.2), where
// its rateLimiterLatency has labels verb and host. A limiter is not told
// the verb, so ours has the host alone: the API server's host and port.
func TestTheRateLimiterWaitHistogramHasClientGosNameAndBucketsAndTheHostAlone(t *testing.T) {
	provider := newDescRecorder()
	reg, err := metrics.NewRegistry(provider)
	require.NoError(t, err)
	_, err = sharedinformer.NewFactory(&rest.Config{Host: "https://10.0.0.1:6443"}, sharedinformer.FactoryOptions{Metrics: reg})
	require.NoError(t, err)
	d, ok := provider.histograms[rateLimiterWait]
	require.True(t, ok, "the factory asks for %s", rateLimiterWait)
	assert.Equal(t, []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}, d.Buckets)
	assert.Equal(t, []string{"host"}, d.Labels)
	assert.Equal(t, []string{"10.0.0.1:6443"}, provider.values[rateLimiterWait])
}
