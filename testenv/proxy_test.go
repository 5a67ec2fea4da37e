package testenv_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// getLatencies returns the latencies of n GETs of one ConfigMap, fastest
// first.
func getLatencies(ctx context.Context, t *testing.T, client *rest.RESTClient, ns, name string, n int) []time.Duration {
	t.Helper()
	var took []time.Duration
	for range n {
		start := time.Now()
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Error())
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took
}

// The bound is one-sided, so that a loaded machine cannot fail it: a GET
// can be slow for many reasons, but through a proxy that adds an RTT it
// can never be faster than that RTT. The fastest of nine is checked, so
// an RTT that were not added fails the test unless every one of nine
// plain GETs took as long as the RTT (a plain GET takes a few ms).
func TestProxyRTTShowsUpInRequestLatency(t *testing.T) {
	const rtt = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy, cfg := cp.Proxy(t)
	cfg.QPS = -1 // no client-side rate limit: only the network should shape latency
	client := coreClient(t, cfg)
	createConfigMap(ctx, t, client, ns, "target")

	base := getLatencies(ctx, t, client, ns, "target", 9)
	proxy.SetRTT(rtt)
	slowed := getLatencies(ctx, t, client, ns, "target", 9)

	t.Logf("GET through the proxy: fastest %v, median %v; with %v RTT added: fastest %v, median %v", base[0], base[4], rtt, slowed[0], slowed[4])
	assert.GreaterOrEqual(t, slowed[0], rtt, "every request is one round trip at least")
}

// Left alone, the apiserver ends a watch after 30 to 60 minutes (its
// --min-request-timeout, 1800 s by default, and a random factor); nothing
// else here ends it: the watch's own context has no deadline. So a watch
// that ends within the hang guard was ended by the cut, however slowly a
// loaded machine noticed it.
func TestProxyCutEndsAnOpenWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy, cfg := cp.Proxy(t)
	client := coreClient(t, cfg)
	created := createConfigMap(ctx, t, client, ns, "watched")

	w, err := watchConfigMaps(context.Background(), client, ns, created.ResourceVersion)
	require.NoError(t, err)
	defer w.Stop()
	require.GreaterOrEqual(t, proxy.CutAll(), 1)

	start := time.Now()
	select {
	case _, ok := <-w.ResultChan():
		assert.False(t, ok, "the cut watch ends; it delivers no event")
	case <-time.After(hangGuard):
		t.Fatalf("the watch is still open %v after its connection was cut", hangGuard)
	}
	t.Logf("the watch ended %v after the cut", time.Since(start))
}

// A request through a refusing proxy fails with the dial's refusal, not
// by waiting for its context's deadline.
func TestProxyRefusedConnectionsFailFast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	createConfigMap(ctx, t, coreClient(t, cp.Config()), ns, "unreachable")
	proxy, cfg := cp.Proxy(t)

	// The proxied client has never connected, so it has no pooled
	// connection whose failure ("broken pipe", "reset") could come first:
	// its request must dial, and the dial is refused.
	proxy.Refuse(time.Minute)
	start := time.Now()
	err := coreClient(t, cfg).Get().Namespace(ns).Resource("configmaps").Name("unreachable").Do(ctx).Error()
	took := time.Since(start)
	require.Error(t, err)
	// "At once" is the kernel's answer, not a wall-clock bound a loaded
	// machine could overrun: ECONNREFUSED answers a dial to a closed
	// port, while a request left waiting would end in ctx's deadline.
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "a refused connection fails at once instead of waiting for a time-out")
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("refused after %v: %v", took, err)
}

func TestProxyBlackholeMakesRequestsHangUntilTheirContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy, cfg := cp.Proxy(t)
	client := coreClient(t, cfg)
	createConfigMap(ctx, t, client, ns, "partitioned")

	proxy.Blackhole()
	const patience = 500 * time.Millisecond
	start := time.Now() // before the deadline is set, so took >= patience holds exactly
	reqCtx, reqCancel := context.WithTimeout(ctx, patience)
	defer reqCancel()
	err := client.Get().Namespace(ns).Resource("configmaps").Name("partitioned").Do(reqCtx).Error()
	took := time.Since(start)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a partition neither answers nor refuses")
	assert.GreaterOrEqual(t, took, patience, "the request hung until its context ended")

	proxy.Heal()
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Name("partitioned").Do(ctx).Error(),
		"after Heal the same client gets through")
}
