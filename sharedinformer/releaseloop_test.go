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
// again, round after round. Whatever a released informer leaves behind
// would add up, so the test counts what a leak would add to, rather than
// sampling the live heap (whose noise on a loaded machine is larger than
// a leak of a few informers):
//
//   - the library's goroutines: every informer runs a fixed number, and
//     Release returns only once a released informer's have ended;
//   - the metrics series: a re-asked informer takes back the names its
//     predecessor gave up, so the series' count stays where it was.
//
// After a first round, which runs the re-ask path once, each round must
// leave both counts exactly where they were: one goroutine or series
// left behind by any of a round's ten releases fails that round.
func TestReleasingAndReAskingInformersInALoopLeavesGoroutinesAndMetricsFlat(t *testing.T) {
	const informers, churned, rounds = 50, 10, 10
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	writer := cp.Config()
	writer.QPS = -1 // no client-side throttle: at its default, 50 creates would take 8 s
	client, err := testenv.CoreV1Client(writer)
	require.NoError(t, err)
	for i := range informers {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"n": fmt.Sprint(i)}}}
		require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())
	}
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1000, 1000 // a LIST and a WATCH a re-ask; the client's limiter is not what is measured
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
	sync := func() {
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx))
		for _, inf := range held[:churned] {
			require.Equal(t, 1, inf.Indexer().Len())
		}
	}
	reAsk := func() {
		for i := range churned {
			require.NoError(t, sharedinformer.Release(ctx, f, held[i]))
			held[i] = ask(i)
		}
		sync()
	}
	sync()
	reAsk() // warm: every informer has run and named its series, and the re-ask path has run
	goroutines := eventuallyExactly(t, libraryGoroutines, -1)
	seriesCount := seriesIn(series)
	for round := 1; round <= rounds; round++ {
		reAsk()
		require.Equal(t, goroutines, eventuallyExactly(t, libraryGoroutines, goroutines),
			"round %d: a released informer's goroutines end with it", round)
		require.Equal(t, seriesCount, seriesIn(series), "round %d: a re-asked informer reuses its predecessor's series", round)
	}
	t.Logf("%d library goroutines and %d metrics series after the first round, and after each of %d more, %d releases in all",
		goroutines, seriesCount, rounds, churned*(rounds+1))
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

// eventuallyExactly polls count until it is want (any value, if want is
// negative, once two readings agree) and returns the last reading.
// Goroutines of an informer that was just released, or just synced, end
// or settle moments later: the test waits for that state, however long a
// loaded machine takes to reach it, up to a minute.
func eventuallyExactly(t *testing.T, count func() int, want int) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := count()
	for (want < 0 || last != want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n := count()
		if want < 0 && n == last {
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
