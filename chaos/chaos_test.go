package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
	"github.com/listwatch/informer/workqueue"
)

// On each control plane the writers and the faults run until every kind
// of fault has been injected once (allFaults, in an order the seed
// chooses), unless LISTWATCH_SOAK (a duration, such as 10m) asks for a
// soak: then each of the two control planes gets half of it.

// How long the informer, its handlers and the controller get to settle
// once the writers and the faults have stopped. Generous: under -race on
// a shared 2-core machine a relist after a restart can take a while.
const settleTimeout = 90 * time.Second

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return s
}()

func TestChaosInformerCacheHandlersAndControllerConverge(t *testing.T) {
	seed := chaosSeed(t)
	var d time.Duration // 0: every kind of fault once
	if soak := os.Getenv("LISTWATCH_SOAK"); soak != "" {
		total, err := time.ParseDuration(soak)
		require.NoError(t, err, "LISTWATCH_SOAK must be a duration, such as 10m")
		d = total / 2
	}
	length := "every kind of fault once"
	if d > 0 {
		length = d.String() + " of chaos"
	}
	t.Logf("seed %d (replay with LISTWATCH_CHAOS_SEED=%d), %s per control plane", seed, seed, length)
	for i, c := range []struct {
		name string
		opts testenv.Options
	}{
		{"watch cache off, compaction gives 410s", testenv.Options{DisableWatchCache: true}},
		{"watch cache on, restarts give too-old resourceVersions", testenv.Options{}},
	} {
		t.Run(c.name, func(t *testing.T) { chaosRun(t, c.opts, seed+uint64(i), d) })
	}
}

// chaosSeed is LISTWATCH_CHAOS_SEED, or a fresh one.
func chaosSeed(t *testing.T) uint64 {
	if s := os.Getenv("LISTWATCH_CHAOS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "LISTWATCH_CHAOS_SEED must be an unsigned integer")
		return seed
	}
	return rand.Uint64()
}

// rvNumber finds the resourceVersion in a relist reason, so that reasons
// can be counted by kind.
var rvNumber = regexp.MustCompile(`resourceVersion \d+`)

// counters derives the run's figures from the informer's trace hook and
// error reports.
type counters struct {
	relists, delivered, handlerPanics atomic.Int64

	mu            sync.Mutex
	relistReasons map[string]int // guarded by mu
	errorKinds    map[string]int // reflector Error.Op → count; guarded by mu
	unexpected    []string       // errors that are not the reflector's retried failures; guarded by mu
}

func (c *counters) trace(e informer.TraceEvent) {
	switch {
	case e.Stage == informer.StageReflector && e.Kind == reflector.KindRelist:
		c.relists.Add(1)
		reason := rvNumber.ReplaceAllString(e.Detail, "resourceVersion N")
		c.mu.Lock()
		c.relistReasons[reason]++
		c.mu.Unlock()
	case e.Stage == informer.StageListener && e.Kind == sharedinformer.KindDelivered:
		c.delivered.Add(1)
	case e.Stage == informer.StageListener && e.Kind == sharedinformer.KindHandlerPanic:
		c.handlerPanics.Add(1)
	}
}

func (c *counters) onError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var re *reflector.Error
	if errors.As(err, &re) && re.Op != reflector.KindWatchEvent {
		c.errorKinds[re.Op]++ // a failed request, retried: expected under chaos
		return
	}
	if len(c.unexpected) < 10 {
		c.unexpected = append(c.unexpected, err.Error())
	}
}

func chaosRun(t *testing.T, opts testenv.Options, seed uint64, d time.Duration) {
	// Goroutines running before the control plane starts (the test
	// framework's, client-go's init) are not ours to check.
	ignore := []goleak.Option{goleak.IgnoreCurrent(),
		// The control plane's process waiters: one per etcd and apiserver
		// process, including those a Restart starts; testenv ends them
		// at cleanup, after this check.
		goleak.IgnoreAnyFunction("github.com/listwatch/informer/testenv.startProcess.func1"),
		// Idle keep-alive connections of the writers' client, straight to
		// the apiserver: client-go caches one transport per configuration
		// for the life of the process, so they belong to that cache, not to
		// the informer or the controller.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	}
	cp := testenv.Private(t, opts)
	ns := cp.Namespace(t)
	proxy, err := faultproxy.Start(cp.Addr())
	require.NoError(t, err)
	defer proxy.Close() // also closed before the leak check; Close twice is fine

	direct := cp.Config()
	direct.QPS = -1
	direct.UserAgent = "chaos-writers"
	writerClient, err := testenv.CoreV1Client(direct)
	require.NoError(t, err)
	via := cp.ConfigVia(proxy.Addr())
	via.QPS = -1
	via.UserAgent = "chaos-informer"
	via.Timeout = 0
	controllerClient, err := testenv.CoreV1Client(via)
	require.NoError(t, err)

	// The informer, through the proxy, with a short backoff and watch
	// timeout so a short run sees many reconnects.
	c := &counters{relistReasons: map[string]int{}, errorKinds: map[string]int{}}
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](via, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
	})
	require.NoError(t, err)
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Resource:      corev1.Resource("configmaps"),
		Reflector: reflector.Tuning{
			PageSize:       10, // several pages per list, so a fault can hit between pages
			WatchTimeout:   3 * time.Second,
			BackoffInitial: 50 * time.Millisecond,
			BackoffMax:     time.Second,
		},
		Trace:   c.trace,
		OnError: c.onError,
	})
	require.NoError(t, err)
	views := []*view{newView("fast", 0), newView("slow", 2*time.Millisecond), newView("resynced", 0)}
	var regs []sharedinformer.Syncer
	for i, v := range views {
		ho := sharedinformer.HandlerOptions{Name: v.name}
		if i == 2 {
			ho.ResyncPeriod = 2 * time.Second // resyncs are updates from the state it holds to itself
		}
		reg, err := inf.AddEventHandler(v.handler(), ho)
		require.NoError(t, err)
		regs = append(regs, reg)
	}
	ctrl := &mirror{ns: ns, lister: inf.Lister(), client: controllerClient,
		queue: workqueue.New(workqueue.Options[string]{
			RateLimiter: must(workqueue.NewExponentialRateLimiter[string](10*time.Millisecond, time.Second)),
		})}
	_, err = inf.AddEventHandler(ctrl.handler(), sharedinformer.HandlerOptions{Name: "mirror"})
	require.NoError(t, err)

	ctx, stop := context.WithCancel(t.Context())
	var running sync.WaitGroup
	running.Go(func() { _ = inf.Run(ctx) })
	syncCtx, cancelSync := context.WithTimeout(ctx, hangGuard)
	require.NoError(t, sharedinformer.WaitForCacheSync(syncCtx, regs...), "the informer never synced")
	cancelSync()
	running.Go(func() { ctrl.run(ctx) })

	// Chaos: writers and faults for d, or until the injector has injected
	// every kind of fault once.
	w := &writers{ns: ns, client: writerClient, names: 40}
	in := &injector{cp: cp, proxy: proxy, rng: rand.New(rand.NewPCG(seed, 0)), injected: map[string]int{}}
	chaosCtx, endChaos := context.WithCancel(ctx)
	if d > 0 {
		chaosCtx, endChaos = context.WithTimeout(ctx, d)
	}
	chaosStart := time.Now()
	var chaos sync.WaitGroup
	for i := range 3 {
		rng := rand.New(rand.NewPCG(seed, uint64(i+1)))
		chaos.Go(func() { w.run(chaosCtx, rng) })
	}
	chaos.Go(func() {
		in.run(chaosCtx, ctx, d == 0)
		endChaos() // the writers stop with the faults
	})
	chaos.Wait()
	endChaos()
	chaosTook := time.Since(chaosStart)
	proxy.SetRTT(0)

	// Settle: the cache, every handler's view and the controller's output
	// must all match the server. Each check reads a fresh LIST.
	start := time.Now()
	var last string
	settled := false
	for time.Since(start) < settleTimeout {
		if ok, why := settledWith(ctx, writerClient, ns, inf, views); ok {
			settled = true
			break
		} else {
			last = why
		}
		time.Sleep(250 * time.Millisecond)
	}
	settleTook := time.Since(start)
	assert.True(t, settled, "not settled after %v: %s", settleTimeout, last)

	stop()
	running.Wait()
	ctrl.queue.ShutDown()
	require.NoError(t, proxy.Close())

	// The exact assertions, on the final state.
	server, _, err := listServer(t.Context(), writerClient, ns)
	require.NoError(t, err)
	assert.Equal(t, rvs(server), cacheRVs(inf), "the informer's cache equals a fresh LIST")
	for _, v := range views {
		live, violations := v.state()
		assert.Equal(t, rvs(server), live, "handler %s: its view equals a fresh LIST (a vanished object was delivered as a delete)", v.name)
		assert.Empty(t, violations, "handler %s broke the delivery contract", v.name)
	}
	ok, why := mirrored(datas(server))
	assert.True(t, ok, "the controller converged: %s", why)
	assert.Zero(t, c.handlerPanics.Load(), "no handler panicked")
	assert.Zero(t, ctrl.panics.Load(), "no reconcile panicked")
	c.mu.Lock()
	assert.Empty(t, c.unexpected, "only retried request failures were reported")
	in.mu.Lock()
	assert.Empty(t, in.failures, "every fault was injected")
	if d == 0 {
		for _, f := range allFaults {
			assert.Equal(t, 1, in.injected[f], "one fault of each kind: %s", f)
		}
	}
	in.mu.Unlock()

	faults, total := in.summary()
	var delivered, unknown int64
	for _, v := range views {
		delivered += v.delivered()
		unknown += v.unknownDeletes.Load()
	}
	t.Logf("chaos summary: %v of chaos: faults %d (%s); relists %d %v; reflector errors %v; events delivered %d (trace) / %d to the 3 checked handlers, %d deletes with final state unknown; writes %d done %d rejected (exists, not found, apiserver down); reconciles %d (%d writes, %d failed); final objects %d; settled in %v",
		chaosTook.Round(time.Millisecond), total, faults, c.relists.Load(), c.relistReasons, c.errorKinds, c.delivered.Load(), delivered, unknown,
		w.ok.Load(), w.failed.Load(), ctrl.reconciles.Load(), ctrl.writes.Load(), ctrl.failures.Load(), len(server), settleTook.Round(time.Millisecond))
	c.mu.Unlock()
	assert.Positive(t, c.relists.Load(), "the faults caused at least one relist")

	goleak.VerifyNone(t, ignore...)
}

// settledWith reports whether the cache, every view and the controller's
// output match a fresh LIST, and if not, why.
func settledWith(ctx context.Context, client *rest.RESTClient, ns string, inf *sharedinformer.Informer[*corev1.ConfigMap], views []*view) (bool, string) {
	server, _, err := listServer(ctx, client, ns)
	if err != nil {
		return false, err.Error()
	}
	want := rvs(server)
	if got := cacheRVs(inf); !mapsEqual(got, want) {
		return false, fmt.Sprintf("cache has %d objects, server %d", len(got), len(want))
	}
	for _, v := range views {
		if live, _ := v.state(); !mapsEqual(live, want) {
			return false, fmt.Sprintf("handler %s has %d objects, server %d", v.name, len(live), len(want))
		}
	}
	return mirrored(datas(server))
}

func listServer(ctx context.Context, client *rest.RESTClient, ns string) ([]corev1.ConfigMap, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list := &corev1.ConfigMapList{}
	err := client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list)
	return list.Items, list.ResourceVersion, err
}

// rvs maps each object's key to its resourceVersion.
func rvs(cms []corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for _, cm := range cms {
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

func datas(cms []corev1.ConfigMap) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, cm := range cms {
		out[cm.Name] = cm.Data
	}
	return out
}

func cacheRVs(inf *sharedinformer.Informer[*corev1.ConfigMap]) map[string]string {
	out := map[string]string{}
	for _, cm := range inf.Lister().List(labels.Everything()) {
		out[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
