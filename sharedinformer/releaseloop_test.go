package sharedinformer_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// A factory with 50 informers; 10 of them are released and asked for
// again, 100 times. Whatever a released informer leaves behind would add
// up over 1,000 releases, so the test counts what a leak would add to,
// rather than sampling the live heap (whose noise on a loaded machine is
// larger than a leak of a few informers):
//
//   - the library's goroutines: every informer runs a fixed number, and
//     Release returns only once a released informer's have ended;
//   - the metrics series: a re-asked informer takes back the names its
//     predecessor gave up, so the series' count stays where it was.
func TestReleasingAndReAskingInformersInALoopLeavesGoroutinesAndMetricsFlat(t *testing.T) {
	const informers, churned, rounds = 50, 10, 100
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	for i := range informers {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"n": fmt.Sprint(i)}}}
		require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())
	}
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1000, 1000 // 1,000 LISTs; the client's limiter is not what is measured
	series := metrics.NewMemory()
	reg, err := metrics.NewRegistry(series)
	require.NoError(t, err)
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer func() { stop(); f.Wait() }()

	ask := func(i int) *cmInformer {
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace(ns), sharedinformer.WithLabels(fmt.Sprintf("n=%d", i)))
		require.NoError(t, err)
		return inf
	}
	held := make([]*cmInformer, informers)
	for i := range held {
		held[i] = ask(i)
	}
	var goroutines, seriesCount int
	for round := range rounds {
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx))
		for _, inf := range held[:churned] {
			require.Equal(t, 1, inf.Indexer().Len())
		}
		if round == 10 { // warm: every informer has run and named its series
			goroutines = eventuallyAtMost(t, libraryGoroutines, -1)
			seriesCount = seriesIn(series)
		}
		for i := range churned {
			require.NoError(t, sharedinformer.Release(ctx, f, held[i]))
			held[i] = ask(i)
		}
	}
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(ctx))
	after := eventuallyAtMost(t, libraryGoroutines, goroutines)
	t.Logf("after round 10: %d library goroutines, %d metrics series; after round %d: %d, %d",
		goroutines, seriesCount, rounds, after, seriesIn(series))
	require.LessOrEqual(t, after, goroutines, "a released informer's goroutines end with it")
	require.Equal(t, seriesCount, seriesIn(series), "a re-asked informer reuses its predecessor's series")
}

// libraryGoroutines counts the goroutines running this library's code
// (not the test's, not net/http's): each informer runs a fixed number.
func libraryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			if strings.HasPrefix(line, "github.com/listwatch/informer/") && !strings.Contains(line, "_test.") {
				count++
				break
			}
		}
	}
	return count
}

// eventuallyAtMost polls count until it is at most bound (any value, if
// bound is negative, once two readings agree) and returns the last
// reading. Goroutines of an informer that was just released, or just
// synced, end or settle moments later: the test waits for that state,
// however long a loaded machine takes to reach it, up to a minute.
func eventuallyAtMost(t *testing.T, count func() int, bound int) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := count()
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n := count()
		if (bound < 0 && n == last) || (bound >= 0 && n <= bound) {
			return n
		}
		last = n
	}
	return last
}

// seriesIn counts the series a Memory provider holds, one a line.
func seriesIn(m *metrics.Memory) int {
	return strings.Count(m.String(), "\n") + 1
}
