package sharding_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// Scenario (a real Sharder, members a and b, each keying its ConfigMaps
// by ring key; the sharder's ConfigMap watch lags behind its own write,
// no other fault):
//
//   - ConfigMap P (no controller: ring key its own) is a's; the ring of
//     {a, b} gives it to b. ConfigMap kid is a's, a child of P.
//
// The sharder drains P; a lets it go. The sharder assigns P to b:
// moveTree drains kid first (childDrains) and waits. Its own watch has not
// delivered that drain yet (a watch lags: here it is held from that
// event on). a lets kid go at once (its parent P is not on a). b leaves:
// the ring is {a} again, and the sharder assigns P back to a. moveTree
// reads P from the API server (unchanged since the cache saw it: the
// check passes) but kid from its cache, which still shows kid a's and
// not draining: childStays, and nothing is written for kid, so no
// resourceVersion guard catches the stale view. P is labelled a while kid
// is unlabelled on the server: a gets P and reconciles it without kid in
// its cache. Only when the watch catches up does the sharder see kid
// unlabelled and give it to a (decideChild).
//
// Had the sharder taken kid's drain back before labelling P (a write
// guarded by the version it read, as every move of a child is), the
// stale view would have failed with 409 and P waited for kid.
//
// Promise broken: docs/16, "a child must never reach a new member while
// the old member still owns its parent: the old member, finding the child
// gone from its cache mid-reconcile, may create it again ... the sharder
// gives the children to the new member, then the parent"; doc.go, "A
// child whose owner is sharded follows the owner's handover and never
// runs ahead of it"; moveTree's own comment, "Moving its children on a
// stale view would send them ahead of it" (here: leave them behind it).
func TestAParentAssignedBackToItsMemberIsNotReconciledThereWithoutTheChildWhoseDrainTheSharderHadNotSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns := c.ns
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		var parentName string // set before any object exists
		var checking bool     // from the first drain on: a reconciled P with kid before (kid was made after P)
		var mu sync.Mutex
		var missing []string
		run := func(ctx context.Context, shard sharding.Shard) {
			scheme := runtime.NewScheme()
			require.NoError(t, corev1.AddToScheme(scheme))
			factory := must(si.NewFactory(c.as("member"), si.FactoryOptions{Scheme: scheme}))
			cms := must(si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns), si.WithLabels(shard.Selector())))
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
				mu.Lock()
				p, check := parentName, checking
				mu.Unlock()
				if key.Name == p && check {
					if _, err := cms.Lister().Namespace(ns).Get("kid"); err != nil {
						mu.Lock()
						missing = append(missing, fmt.Sprintf("%s reconciled %s at %v without kid in its cache", shard.Member, p, time.Now()))
						mu.Unlock()
					}
				}
				return workqueue.Result{}, nil
			}
			workqueue.Run(ctx, queue, sharding.Reconciler(shard, cms.Lister(), client, "configmaps", reconcile),
				workqueue.RunOptions[informer.Key]{Workers: 2})
		}
		bctx, stopB := context.WithCancel(ctx)
		defer stopB()
		a := startMembers(ctx, t, &wg, c.cfg, ns, []string{"a"}, run)[0]
		b := startMembers(bctx, t, &wg, c.cfg, ns, []string{"b"}, run)[0]
		name := nameOn(must(sharding.NewRing([]string{a, b}, 0)), ns, "parent", b)
		mu.Lock()
		parentName = name
		mu.Unlock()
		shard := sharding.Shard{Ring: ring}
		// Both are a's before the sharder starts.
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{shard.Label(): a}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		kid := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kid",
			Labels: map[string]string{shard.Label(): a}, OwnerReferences: controlledByConfigMap(parent)}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(kid).Do(ctx).Error())

		// The sharder's ConfigMap watch is held from the event of kid's
		// drain on: its cache lags behind its own write.
		gate := &eventGate{hold: func(event []byte) bool {
			return bytes.Contains(event, []byte("kid")) && bytes.Contains(event, []byte(shard.DrainLabel()))
		}, held: make(chan struct{}), release: make(chan struct{}), stop: ctx.Done()}
		sharderCfg := c.as("sharder")
		sharderCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return gate.transport(rt, "/api/v1/namespaces/"+ns+"/configmaps")
		})
		assignedBack := make(chan struct{})
		var kidAtAssign string // kid's shard label on the server as P was assigned back to a
		var once sync.Once
		var labels sync.Map
		startSharder(ctx, t, &wg, sharderCfg, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.OnLabel = func(action string, key informer.Key, member string) {
				if key.Name == name && action == "assign" && member == a {
					once.Do(func() {
						kidAtAssign = labelOf(context.Background(), t, c.core, ns, "kid") // the sharder has just labelled P a
						close(assignedBack)
					})
				}
			}
		})

		guard := time.Minute         // simulated: many times what each step takes
		receive(t, gate.held, guard) // elected, the sharder drained P, a let it go; moveTree drained kid; the sharder's watch holds that event
		mu.Lock()
		checking = true
		mu.Unlock()
		for deadline := time.Now().Add(guard); labelOf(ctx, t, c.core, ns, "kid") != ""; time.Sleep(10 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "a never let kid go")
		}
		stopB() // b leaves: the ring is {a} again
		select {
		case <-assignedBack: // while its watch lags
			time.Sleep(5 * time.Second) // a gets P and reconciles it
		case <-time.After(guard): // a sharder that waits for its cache assigns P once the watch catches up
		}
		close(gate.release)
		time.Sleep(time.Minute)
		receive(t, assignedBack, guard)

		var gotP, gotKid corev1.ConfigMap
		require.NoError(t, c.core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(&gotP))
		require.NoError(t, c.core.Get().Namespace(ns).Resource("configmaps").Name("kid").Do(ctx).Into(&gotKid))
		t.Logf("a=%s b=%s; at the end P labels %v, kid labels %v", a, b, gotP.Labels, gotKid.Labels)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, a, kidAtAssign, "the sharder labelled P %s while its child kid was not there (kid's label on the server: %q): its cache had not shown kid's drain", a, kidAtAssign)
		require.Empty(t, missing, "P was assigned back to %s while kid, whose drain (toward b) the sharder's cache had not shown yet, had been let go by %s", a, a)
		require.Equal(t, a, gotKid.Labels[shard.Label()], "kid ends with its parent")
	})
}

// eventGate holds the watch streams of one collection, for every client
// it wraps, from the first event (a JSON line, or a protobuf frame) that
// hold picks: that
// event and every later one reach the client only once release is
// closed. held is closed when it starts holding.
type eventGate struct {
	hold          func(line []byte) bool
	held, release chan struct{}
	stop          <-chan struct{} // the test's end

	mu      sync.Mutex
	holding bool // guarded by mu
}

// transport is rt with the watches of path behind the gate.
func (g *eventGate) transport(rt http.RoundTripper, path string) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.URL.Path != path || req.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		ct := resp.Header.Get("Content-Type")
		if !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
			return nil, fmt.Errorf("eventGate reads JSON or protobuf watch streams only, not %q", ct)
		}
		resp.Body = &gatedBody{g: g, body: resp.Body, protobuf: !strings.HasPrefix(ct, "application/json")}
		return resp, nil
	})
}

// wait blocks, for an event, while the gate holds (or starts to).
func (g *eventGate) wait(event []byte) error {
	g.mu.Lock()
	select {
	case <-g.release:
		g.mu.Unlock()
		return nil
	default:
	}
	if !g.holding && g.hold(event) {
		g.holding = true
		close(g.held)
	}
	holding := g.holding
	g.mu.Unlock()
	if !holding {
		return nil
	}
	select {
	case <-g.release:
		return nil
	case <-g.stop:
		return errors.New("the test ended")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// gatedBody is one watch stream behind the gate, event by event.
type gatedBody struct {
	g            *eventGate
	body         io.ReadCloser
	protobuf     bool // frames are a 4-byte big-endian length and a WatchEvent; else JSON lines
	pending, out []byte
	err          error
}

// frame returns the length of the first whole event in pending, or 0.
func (b *gatedBody) frame() int {
	if b.protobuf {
		if len(b.pending) < 4 {
			return 0
		}
		if n := 4 + int(binary.BigEndian.Uint32(b.pending)); len(b.pending) >= n {
			return n
		}
		return 0
	}
	return bytes.IndexByte(b.pending, '\n') + 1
}

func (b *gatedBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if n := b.frame(); n > 0 {
			line := slices.Clone(b.pending[:n])
			b.pending = b.pending[n:]
			if err := b.g.wait(line); err != nil {
				return 0, err
			}
			b.out = line
			break
		}
		if b.err != nil {
			return 0, b.err
		}
		buf := make([]byte, 32*1024)
		n, err := b.body.Read(buf)
		b.pending = append(b.pending, buf[:n]...)
		b.err = err
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *gatedBody) Close() error { return b.body.Close() }
