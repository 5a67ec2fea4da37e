package sharding_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// Scenario (a real Sharder; member a keys its ConfigMaps by ring key with
// two workers, as the simulator's members do; member b is idle; the
// simulator's seed 1454 of the sharded scenario, "children follow
// parents": p-02-web let go by its member while its parent p-02, newer
// than it, was labelled for that member):
//
//   - ConfigMap kid, an orphan whose own key the ring gives to b, sits on
//     a (whose controller has not started yet: a member would let a
//     drained orphan go at once).
//   - ConfigMap P, new and unlabelled, whose key the ring gives to a.
//
// The sharder drains kid toward b, and assigns P to a: its cache shows P
// with no child (kid is an orphan there), so moveChildren has nothing to
// do, and its PATCH of P is on its way (here held by the server; a look
// at the server then would show no child either). Meanwhile a writer
// adopts kid:
// its controller owner reference becomes P (a ReplicaSet adopting an
// orphan Pod). The sharder's watch has not delivered that yet (held from
// then on). a's cache shows kid adopted and drained, but not P: P is not
// labelled for a yet. A call of key P (kid's ring key now) finds P absent,
// so it lets kid go (drainsUnder, acknowledgeAll: waitsForParent is false,
// P not being in a's cache); that PATCH, guarded by kid's
// resourceVersion only, is on its way (held by the server) while P's
// label lands. It lands after: kid is unlabelled while P is labelled a.
// a then gets P and reconciles it without kid in its cache, and only
// once the sharder's watch catches up is kid given back to a
// (decideChild).
//
// Had the sharder seen kid as P's child, moveTree would have taken kid's
// drain back before labelling P (a write guarded by kid's version), and
// a's acknowledgement, guarded by the version before it, would have
// failed with 409. It did not, and a let kid go (the simulator's record:
// once in about ten thousand sharded seeds). Now kid's drain names the
// controller it was issued for ("orphan"), the adoption leaves it stale,
// and a neither lets kid go nor reconciles it until the sharder, seeing
// the adoption, takes the drain back (drainvalue.go).
//
// Promise kept: docs/16, "Children follow their parent": "a child must
// never reach a new member while the old member still owns its parent:
// the old member, finding the child gone from its cache mid-reconcile,
// may create it again"; doc.go, "a drained child of a parent this member
// keeps stays with it".
func TestAChildAdoptedWhileDrainedIsNotLetGoAfterItsNewParentIsLabelledForItsMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var parentName, kidName string // set before either exists
		pPatched, ackSent := make(chan struct{}), make(chan struct{})
		releaseP, releaseAck := make(chan struct{}), make(chan struct{})
		var onceP, onceAck sync.Once
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			p, k := parentName, kidName
			mu.Unlock()
			if r.Method != http.MethodPatch || p == "" {
				return fakeapiserver.Fault{}
			}
			switch {
			case r.UserAgent() == "sharder" && strings.HasSuffix(r.URL.Path, "/configmaps/"+p):
				onceP.Do(func() { close(pPatched) })
				return fakeapiserver.Fault{Hang: true, Until: releaseP} // the sharder's assignment of P, on its way
			case r.UserAgent() == "member-a" && strings.HasSuffix(r.URL.Path, "/configmaps/"+k):
				onceAck.Do(func() { close(ackSent) })
				return fakeapiserver.Fault{Hang: true, Until: releaseAck} // a's acknowledgement of kid, on its way
			}
			return fakeapiserver.Fault{}
		})
		ns := c.ns
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		shard := sharding.Shard{Ring: ring}

		// Every version of every ConfigMap, in order, as an admin's watch
		// sees it (the simulator's checker does the same).
		type version struct {
			name, owner, label, drain string
		}
		var history []version
		events := must(c.core.Get().Namespace(ns).Resource("configmaps").Param("watch", "true").Watch(ctx))
		defer events.Stop()
		wg.Go(func() {
			for e := range events.ResultChan() {
				cm, ok := e.Object.(*corev1.ConfigMap)
				if !ok || e.Type == watch.Bookmark {
					continue
				}
				v := version{name: cm.Name, label: cm.Labels[shard.Label()], drain: cm.Labels[shard.DrainLabel()]}
				if ref := metav1.GetControllerOf(cm); ref != nil {
					v.owner = ref.Name
				}
				if e.Type == watch.Deleted {
					v.label = ""
				}
				mu.Lock()
				history = append(history, v)
				mu.Unlock()
			}
		})

		startA := make(chan struct{})
		aGate := &eventGate{held: make(chan struct{}), release: make(chan struct{}), stop: ctx.Done()}
		var missing []string
		runA := func(ctx context.Context, s sharding.Shard) {
			select {
			case <-startA: // a's controller starts once kid is adopted
			case <-ctx.Done():
				return
			}
			mu.Lock()
			p, k := parentName, kidName
			mu.Unlock()
			aGate.hold = func(event []byte) bool { return bytes.Contains(event, []byte(p)) } // P's ADD, once labelled a, and on
			cfg := c.as("member-a")
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return aGate.transport(rt, "/api/v1/namespaces/"+ns+"/configmaps")
			})
			scheme := runtime.NewScheme()
			require.NoError(t, corev1.AddToScheme(scheme))
			factory := must(si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme}))
			cms := must(si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns), si.WithLabels(s.Selector())))
			client := must(factory.RESTClient(corev1.SchemeGroupVersion))
			queue := workqueue.New(workqueue.Options[informer.Key]{})
			defer queue.ShutDown()
			must(cms.AddEventHandler(byRingKey(queue)))
			factory.Start(ctx)
			defer factory.Wait()
			if factory.WaitForCacheSync(ctx) != nil {
				return
			}
			reconcile := func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				if key.Name == p {
					if _, err := cms.Lister().Namespace(ns).Get(k); err != nil {
						mu.Lock()
						missing = append(missing, fmt.Sprintf("%s reconciled %s at %v without its child %s in its cache", s.Member, p, time.Now(), k))
						mu.Unlock()
					}
				}
				return workqueue.Result{}, nil
			}
			workqueue.Run(ctx, queue, sharding.Reconciler(s, cms.Lister(), client, "configmaps", reconcile),
				workqueue.RunOptions[informer.Key]{Workers: 2})
		}
		a := startMembers(ctx, t, &wg, c.cfg, ns, []string{"a"}, runA)[0]
		b := startMembers(ctx, t, &wg, c.cfg, ns, []string{"b"}, nil)[0]
		r := must(sharding.NewRing([]string{a, b}, 0))
		p, k := nameOn(r, ns, "parent", a), nameOn(r, ns, "kid", b)
		mu.Lock()
		parentName, kidName = p, k
		mu.Unlock()

		// kid sits on a (its own key is b's); P is new.
		c.createConfigMap(ctx, t, k, a, nil)
		parent := c.createConfigMap(ctx, t, p, "", nil)

		// The sharder's ConfigMap watch is held from kid's adoption (the
		// first event of kid that names P) on.
		sGate := &eventGate{hold: func(event []byte) bool {
			return bytes.Contains(event, []byte(k)) && bytes.Contains(event, []byte(parent.UID))
		},
			held: make(chan struct{}), release: make(chan struct{}), stop: ctx.Done()}
		sharderCfg := c.as("sharder")
		sharderCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return sGate.transport(rt, "/api/v1/namespaces/"+ns+"/configmaps")
		})
		var labels sync.Map
		startSharder(ctx, t, &wg, sharderCfg, ns, &labels)

		guard := time.Minute // simulated: many times what each step takes
		for deadline := time.Now().Add(guard); drainOf(ctx, t, c, k) == ""; time.Sleep(10 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the sharder never drained kid")
		}
		receive(t, pPatched, guard) // the sharder assigns P to a: no child of P in its cache
		// Nor on the server: the sharder's view was as fresh as a
		// consistent read, and P's PATCH, guarded by P's version, is
		// still good after the adoption.
		var onServer corev1.ConfigMap
		require.NoError(t, c.core.Get().Namespace(ns).Resource("configmaps").Name(k).Do(ctx).Into(&onServer))
		require.Nil(t, metav1.GetControllerOf(&onServer), "kid is not adopted yet as P's PATCH is sent")
		c.adopt(ctx, t, parent, k) // meanwhile kid is adopted by P
		receive(t, sGate.held, guard)
		close(startA) // a's cache: kid adopted and drained, P absent
		select {
		case <-ackSent: // a lets kid go under P's key
			// P is not labelled on the server either: a GET of P before
			// the acknowledgement would not have held kid back.
			require.Empty(t, labelOf(ctx, t, c.core, ns, p), "P is unlabelled as a's acknowledgement is sent")
		case <-time.After(10 * time.Second): // a keeps kid
		}
		close(releaseP) // P's label lands
		for deadline := time.Now().Add(guard); labelOf(ctx, t, c.core, ns, p) != a; time.Sleep(10 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "P never labelled %s", a)
		}
		close(releaseAck) // then a's acknowledgement of kid
		time.Sleep(5 * time.Second)
		close(aGate.release) // a gets P
		time.Sleep(5 * time.Second)
		close(sGate.release) // the sharder sees it all
		c.awaitLabel(ctx, t, k, a, "kid never reached its parent's member %s", a)
		time.Sleep(time.Second)

		mu.Lock()
		defer mu.Unlock()
		var letGo []string
		on := map[string]version{}
		for _, v := range history {
			if prev := on[v.name]; v.name == k && v.owner == p && prev.label == a && v.label != a && on[p].label == a {
				letGo = append(letGo, fmt.Sprintf("%s let go by %s (labels %q, drain %q) while its parent %s was labelled %s", k, a, v.label, v.drain, p, a))
			}
			on[v.name] = v
		}
		t.Logf("a=%s b=%s; history %+v; reconciles without kid: %v", a, b, history, missing)
		require.Empty(t, letGo, "a child left its member while its parent was labelled for that member")
		require.Empty(t, missing, "P's member reconciled P without its child")
	})
}

// drainOf reads name's drain label in ring from the API server.
func drainOf(ctx context.Context, t *testing.T, c *fakeCluster, name string) string {
	cm := &corev1.ConfigMap{}
	require.NoError(t, c.core.Get().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Into(cm))
	return cm.Labels[sharding.Shard{Ring: ring}.DrainLabel()]
}
