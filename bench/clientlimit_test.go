package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/metrics"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// BenchmarkClientLimit measures what the factory's default client-side
// rate limit (QPS 50, burst 100) costs and what it prevents, against the
// local kube-apiserver, as an ordinary user whose requests API Priority
// and Fairness queues (the admin's are exempt from it):
//
//   - workload=burst: 4 workers create 300 ConfigMaps, a controller's
//     answer to a batch of new objects (one op: all 300);
//   - workload=hotloop: 4 workers update one ConfigMap each, as fast as
//     they can, for 2 s: a reconcile that loops on its own writes (one
//     op: the 2 s).
//
// Each runs with limit=default and limit=off (QPS -1). Reported: writes
// per second, seconds spent waiting for the client's limiter, and 429s
// from the server (APF refusing).
func BenchmarkClientLimit(b *testing.B) {
	cp := testenv.Shared(b)
	user, err := cp.ConfigAs("controller")
	if err != nil {
		b.Fatal(err)
	}
	for _, workload := range []string{"burst", "hotloop"} {
		for _, limit := range []string{"default", "off"} {
			b.Run(fmt.Sprintf("workload=%s/limit=%s", workload, limit), func(b *testing.B) {
				cfg := rest.CopyConfig(user)
				if limit == "off" {
					cfg.QPS = -1
				}
				var writes, refused int64
				var waited float64
				for b.Loop() {
					b.StopTimer()
					ns := cp.Namespace(b)
					w := newLimitWriter(b, cfg, ns)
					b.StartTimer()
					switch workload {
					case "burst":
						w.burst(b.Context(), 300)
					case "hotloop":
						w.hotLoop(b.Context(), 2*time.Second)
					}
					b.StopTimer()
					writes += w.writes.Load()
					refused += w.refused.Load()
					waited += w.waited(b, limit == "default")
					b.StartTimer()
				}
				b.ReportMetric(float64(writes)/b.Elapsed().Seconds(), "writes/s")
				b.ReportMetric(waited/float64(b.N), "limiter-s/op")
				b.ReportMetric(float64(refused)/float64(b.N), "429s/op")
			})
		}
	}
}

// limitWriter writes ConfigMaps in one namespace through a factory's
// RESTClient, counting writes and 429 answers.
type limitWriter struct {
	client          *rest.RESTClient
	mem             *metrics.Memory
	host, ns        string
	writes, refused atomic.Int64
}

func newLimitWriter(b *testing.B, cfg *rest.Config, ns string) *limitWriter {
	w := &limitWriter{mem: metrics.NewMemory(), host: cfg.Host, ns: ns}
	if u, err := url.Parse(cfg.Host); err == nil && u.Host != "" {
		w.host = u.Host // the metric's host label is the URL's host and port, as client-go's
	}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusTooManyRequests {
				w.refused.Add(1)
			}
			return resp, err
		})
	}
	reg, err := metrics.NewRegistry(w.mem)
	if err != nil {
		b.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme, Metrics: reg})
	if err != nil {
		b.Fatal(err)
	}
	if w.client, err = factory.RESTClient(corev1.SchemeGroupVersion); err != nil {
		b.Fatal(err)
	}
	return w
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// waited returns the seconds requests waited for the client's limiter:
// 0 when none waited (a limit turned off makes no series).
func (w *limitWriter) waited(b *testing.B, limited bool) float64 {
	sum, ok := w.mem.Sum("rest_client_rate_limiter_duration_seconds", w.host)
	if limited && !ok {
		b.Fatalf("no rest_client_rate_limiter_duration_seconds series for host %q:\n%v", w.host, w.mem)
	}
	return sum
}

// burst creates n ConfigMaps with 4 workers.
func (w *limitWriter) burst(ctx context.Context, n int) {
	names := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range names {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("burst-%d", i)}}
				if w.client.Post().Namespace(w.ns).Resource("configmaps").Body(cm).Do(ctx).Error() == nil {
					w.writes.Add(1)
				}
			}
		})
	}
	for i := range n {
		names <- i
	}
	close(names)
	wg.Wait()
}

// hotLoop has 4 workers update a ConfigMap each, one update after
// another, for d.
func (w *limitWriter) hotLoop(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("loop-%d", worker)}}
			if err := w.client.Post().Namespace(w.ns).Resource("configmaps").Body(cm).Do(context.Background()).Into(cm); err != nil {
				return
			}
			for n := 0; ctx.Err() == nil; n++ {
				cm.Data = map[string]string{"n": fmt.Sprint(n)}
				if w.client.Put().Namespace(w.ns).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Into(cm) == nil {
					w.writes.Add(1)
				}
			}
		})
	}
	wg.Wait()
}
