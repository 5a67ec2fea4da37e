package reflector_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
)

// The DeltaFIFO is the Store the reflector is written for.
var _ reflector.Store[*corev1.ConfigMap] = (*deltafifo.DeltaFIFO[*corev1.ConfigMap])(nil)

func TestProxyCutResumesTheWatchFromItsResourceVersionWithoutRelist(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	proxy, viaProxy := cp.Proxy(t)
	ua := agent(t)
	l := cmReflector(t, withAgent(viaProxy, ua), ns, nil)
	converged(t, l.store.state, cms)
	watching(t, l.trace, 1)

	for i := range 3 {
		before := l.r.LastSyncResourceVersion()
		require.Positive(t, proxy.CutAll(), "the watch's connection")
		// Written while the watch is down or being reopened: the re-watch
		// from the last resourceVersion delivers it.
		cms.create(fmt.Sprintf("after-cut-%d", i))
		converged(t, l.store.state, cms)
		watches := l.trace.of(reflector.KindWatch)
		require.Len(t, watches, i+2)
		assert.Equal(t, before, watches[i+1].ResourceVersion, "the re-watch starts where the cut watch was")
	}
	assert.Equal(t, 1, countRequests(t, cp, ua, "list"), "no relist: a cut watch resumes")
	assert.Equal(t, 1, l.store.count("replace"))
	assert.Equal(t, 4, countRequests(t, cp, ua, "watch"))
}

// With the watch cache off, etcd serves watches, and after a compaction it
// cannot replay history: the reflector's re-watch gets a real 410. The
// relist's Replace then lets the DeltaFIFO report the ConfigMap deleted
// during the outage as a delete whose final state is unknown, carrying the
// last state the cache knew.
func TestRealExpiredWatchRelistsAndVanishedObjectsArriveAsDeletesWithFinalStateUnknown(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true, Audit: true})
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("keep")
	gone := cms.create("gone")
	proxy, viaProxy := cp.Proxy(t)
	ua := agent(t)

	cache := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
	fifo := must(deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache}))
	errs, trace := &errorLog{}, &traceLog{}
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: typedConfigMapLW(t, withAgent(viaProxy, ua), ns, false), Store: fifo,
		OnError: errs.hook, Trace: trace.hook, Tuning: reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
	}))
	run(t, r)
	deletes := consume(t, fifo, cache)
	cached := func() map[string]string {
		out := map[string]string{}
		for _, k := range cache.ListKeys() {
			obj, _ := cache.Get(k)
			out[k.String()] = obj.ResourceVersion
		}
		return out
	}
	converged(t, cached, cms)
	watching(t, trace, 1)

	// The network fails until the writes and the compaction are done: the
	// watch is cut, and the re-watch hangs in the partition until Heal.
	proxy.Blackhole()
	proxy.CutAll()
	cms.delete("gone")
	cms.create("new-1")
	cms.create("new-2")
	_, err := cp.Compact(t.Context())
	require.NoError(t, err)
	proxy.Heal()
	healed := time.Now()

	converged(t, cached, cms)
	t.Logf("converged %v after the network came back", time.Since(healed).Round(time.Millisecond))
	assert.GreaterOrEqual(t, errs.count(apierrors.IsResourceExpired), 1, "the watch got a real 410")
	require.Len(t, trace.of(reflector.KindRelist), 1)
	assert.Equal(t, 2, countRequests(t, cp, ua, "list"), "the first list and one relist")

	got := deletes.of("gone")
	require.Len(t, got, 1, "one delete for the ConfigMap deleted during the outage")
	assert.True(t, got[0].FinalStateUnknown, "inferred from the relist, not seen")
	assert.Equal(t, gone.ResourceVersion, got[0].Object.ResourceVersion, "it carries the last known state")
	assert.Empty(t, deletes.of("keep"))
}

// deltaLog records the Deleted deltas a consumer popped.
type deltaLog struct {
	mu      sync.Mutex
	deleted []deltafifo.Delta[*corev1.ConfigMap]
}

func (l *deltaLog) of(name string) []deltafifo.Delta[*corev1.ConfigMap] {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []deltafifo.Delta[*corev1.ConfigMap]
	for _, d := range l.deleted {
		if d.Object.Name == name {
			out = append(out, d)
		}
	}
	return out
}

// consume pops fifo into cache, as the shared informer will, until the
// test ends, and logs every Deleted delta.
func consume(t *testing.T, fifo *deltafifo.DeltaFIFO[*corev1.ConfigMap], cache *indexer.Indexer[*corev1.ConfigMap]) *deltaLog {
	log := &deltaLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_ = fifo.Pop(ctx, func(_ informer.Key, ds deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
				for _, d := range ds {
					if d.Type == deltafifo.Deleted {
						log.mu.Lock()
						log.deleted = append(log.deleted, d)
						log.mu.Unlock()
					}
				}
				if newest := ds.Newest(); newest.Type == deltafifo.Deleted {
					return cache.Delete(newest.Object)
				}
				return cache.Update(ds.Newest().Object)
			})
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return log
}

// After a restart the watch cache starts afresh, so an old resourceVersion
// may be "too old" (or, for a moment, "too large"). The reflector must
// relist once and carry on, never list again and again.
func TestApiserverRestartConvergesWithoutLoopingOnTooOld(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{Audit: true})
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	cms.create("b")
	ua := agent(t)
	l := cmReflector(t, withAgent(cp.Config(), ua), ns, nil)
	converged(t, l.store.state, cms)
	watching(t, l.trace, 1)

	restarted := time.Now()
	require.NoError(t, cp.Restart(t.Context()))
	t.Logf("the apiserver restarted in %v", time.Since(restarted).Round(time.Millisecond))
	cms.delete("a")
	cms.create("c")
	converged(t, l.store.state, cms)
	t.Logf("converged %v after the restart began", time.Since(restarted).Round(time.Millisecond))

	// A write that arrives as a watch event: the reflector watches again,
	// so whatever relisting the restart caused is over, and a loop would
	// have shown up as more lists.
	cms.create("d")
	eventually(t, func() bool {
		for _, e := range l.trace.of(reflector.KindWatchEvent) {
			if e.Key == ns+"/d" {
				return true
			}
		}
		return false
	}, "d never arrived through a watch")
	lists := countRequests(t, cp, ua, "list")
	t.Logf("LIST requests: %d; errors reported: %v", lists, l.errs.all())
	assert.LessOrEqual(t, lists, 3, "the first list and at most two relists")
	assert.LessOrEqual(t, l.errs.count(apierrors.IsResourceExpired), 2, "no loop on too old")
	converged(t, l.store.state, cms)
}

// mustInt parses a resourceVersion. Clients must treat resourceVersions as
// opaque; only a test that knows the server is etcd-backed may compare.
func mustInt(t *testing.T, rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	require.NoError(t, err)
	return n
}

func TestStreamingListWorksAgainstTheRealServer(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	cms.create("b")
	l := cmReflector(t, cp.Config(), ns, func(o *reflector.Options[*corev1.ConfigMap]) { o.StreamingList = true })
	converged(t, l.store.state, cms)
	assert.Empty(t, l.trace.of(reflector.KindList), "no LIST")
	assert.Empty(t, l.trace.of(reflector.KindFallback), "the server did not refuse")
	ends := l.trace.of(reflector.KindBookmark)
	require.NotEmpty(t, ends)
	assert.Equal(t, "initial events end", ends[0].Detail)
	assert.Equal(t, [][]string{{ns + "/a", ns + "/b"}}, sortedReplaces(l.store.replaces()))

	cms.create("c")
	converged(t, l.store.state, cms)
	assert.Len(t, l.trace.of(reflector.KindWatch), 1, "the stream that listed goes on as the watch")
	assert.Empty(t, l.errs.all())
}

// cutAfter is a ListerWatcher whose first watch has its connection cut,
// at the proxy, once n events have arrived on it: a streaming list cut in
// the middle of its initial events. Events the client had already read
// past the cut are not passed on, so the reflector sees the stream end
// after exactly n events, however the bytes were split on the wire.
type cutAfter struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
	n      int
	proxy  *faultproxy.Proxy
	watchs atomic.Int32
}

func (lw *cutAfter) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := lw.ListerWatcher.Watch(ctx, opts)
	if err != nil || lw.watchs.Add(1) > 1 {
		return w, err
	}
	out := make(chan watch.Event)
	go func() {
		defer close(out)
		defer w.Stop()
		seen := 0
		for ev := range w.ResultChan() {
			out <- ev
			if seen++; seen == lw.n {
				lw.proxy.CutAll()
				return
			}
		}
	}()
	return watch.NewProxyWatcher(out), nil
}

func TestAStreamingListCutMidStreamStreamsAgain(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	for i := range 20 {
		cms.create(fmt.Sprintf("cm-%02d", i))
	}
	proxy, viaProxy := cp.Proxy(t)
	ua := agent(t)
	lw := &cutAfter{ListerWatcher: typedConfigMapLW(t, withAgent(viaProxy, ua), ns, false), n: 5, proxy: proxy}
	l := cmReflector(t, cp.Config(), ns, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.ListerWatcher = lw
		o.StreamingList = true
	})
	converged(t, l.store.state, cms)

	assert.Empty(t, l.trace.of(reflector.KindFallback), "a cut is not a refusal: streaming stays on")
	assert.Zero(t, countRequests(t, cp, ua, "list"), "no LIST")
	streams, err := cp.CountRequests(t.Context(), testenv.RequestFilter{Verb: "watch", UserAgent: ua, URIContains: "sendInitialEvents=true"})
	require.NoError(t, err)
	assert.Equal(t, 2, streams, "the streaming list that was cut, and the next one")
}
