package readyourwrites_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// controller is a ConfigMap controller of one namespace, run with the
// guard (guarded) or without it, so a test can run the same reconcile
// both ways and count what goes wrong.
type controller struct {
	informer *si.Informer[*corev1.ConfigMap]
	client   *rest.RESTClient
	queue    *workqueue.Queue[informer.Key]
	guard    *readyourwrites.Guard // nil when not guarded
	cms      *readyourwrites.Cache[*corev1.ConfigMap]

	writes, conflicts atomic.Int64
}

// startController runs a controller over ns until the test ends: an
// informer whose adds and updates enqueue their key, and workers running
// reconcile, made from the controller once it exists.
//
// Its cache is made slow on purpose: each change reaches it cacheLag
// later (a transform that sleeps, in the reflector's goroutine, before
// the change is queued), as on a loaded machine or with a large cache.
// That widens the window in which a reconcile can read the cache from
// before its own write, so the unguarded runs show the problem every
// time, not once in a while. The sleep holds no lock, so inside a
// synctest bubble every other goroutine stays durably blocked while it
// lasts and simulated time moves on.
func startController(t *testing.T, cfg *rest.Config, ns string, guarded bool, workers int,
	reconcile func(c *controller) workqueue.ReconcileFunc[informer.Key], handlers ...si.Handler[*corev1.ConfigMap]) *controller {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	c := &controller{queue: workqueue.New(workqueue.Options[informer.Key]{})}
	c.informer, err = si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns),
		si.WithTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			time.Sleep(cacheLag)
			return cm, nil
		}))
	require.NoError(t, err)
	c.client, err = factory.RESTClient(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	for _, h := range append(handlers, si.EnqueueKey[*corev1.ConfigMap](c.queue)) {
		_, err = c.informer.AddEventHandler(h)
		require.NoError(t, err)
	}
	opts := workqueue.RunOptions[informer.Key]{Workers: workers, OnError: func(informer.Key, error) {}}
	if guarded {
		c.guard, err = readyourwrites.New(readyourwrites.Options{})
		require.NoError(t, err)
		c.cms = readyourwrites.Track(c.guard, c.informer)
		opts.Gate = c.guard
	}
	factory.Start(ctx)
	require.NoError(t, factory.WaitForCacheSync(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { workqueue.Run(ctx, c.queue, reconcile(c), opts) })
	t.Cleanup(func() {
		cancel()
		c.queue.ShutDown()
		wg.Wait()
		factory.Wait()
	})
	return c
}

// fakeCluster serves a fake API server (package fakeapiserver) over an
// in-memory network, for a test running inside a synctest bubble; each
// request first meets the fault that inject chooses (nil: none). It is
// closed at the test's cleanup, after the controllers the test starts
// later have stopped.
func fakeCluster(t *testing.T, inject fakeapiserver.Injector) (*fakeapiserver.Server, *rest.Config) {
	t.Helper()
	srv := fakeapiserver.New()
	var h http.Handler = srv
	if inject != nil {
		h = fakeapiserver.WithFaults(srv, inject)
	}
	mem := fakeapiserver.ServeInMemory(h)
	t.Cleanup(mem.Close)
	return srv, mem.Config()
}

// randomLatency delays each request by 2 to 8 ms of simulated time,
// drawn from a source seeded with seed, so that runs with different
// seeds interleave writes, watch events and reconciles differently.
func randomLatency(seed uint64) fakeapiserver.Injector {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0))
	return func(*http.Request) fakeapiserver.Fault {
		mu.Lock()
		defer mu.Unlock()
		return fakeapiserver.Fault{Latency: 2*time.Millisecond + time.Duration(r.Int64N(int64(6*time.Millisecond)))}
	}
}

// update PUTs cm, which carries the resourceVersion it was read at, as a
// write of owner's reconcile, recorded by the guard when there is one.
// It counts writes and conflicts.
func (c *controller) update(ctx context.Context, owner informer.Key, cm *corev1.ConfigMap) error {
	req := c.client.Put().Namespace(cm.Namespace).Resource("configmaps").Name(cm.Name).Body(cm)
	var err error
	if c.guard != nil {
		err = c.cms.Write(ctx, owner, req, cm)
	} else {
		err = req.Do(ctx).Into(cm)
	}
	switch {
	case err == nil:
		c.writes.Add(1)
	case apierrors.IsConflict(err):
		c.conflicts.Add(1)
	}
	return err
}

// cacheLag is how much later each change reaches the test controllers'
// caches.
const cacheLag = 20 * time.Millisecond

// within is how long a test waits for its controller to settle: a guard
// against hanging, not a timing.
const within = time.Minute

// pollEvery is how often a test looks again at what it waits for.
const pollEvery = 10 * time.Millisecond

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}
