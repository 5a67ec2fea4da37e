package sharding_test

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A parent missing from the sharder's cache only because its watch lags
// is no reason to treat its child as an orphan. The parents are
// ConfigMaps, the children Secrets: two watches, so the sharder may see
// a child before its parent. Here the sharder's ConfigMap watch is held,
// and a parent and its child appear, both labelled with a live member
// that the ring does not choose (created so, as a restore from a backup
// would). The child must not move, nor be drained, ahead of its parent:
// every relabel of the child finds the parent let go or already on the
// child's new member, and in the end both are on the ring's member.
func TestAChildWhoseParentTheSharderHasNotSeenYetWaitsForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		// Two members acknowledge the drains of their ConfigMaps.
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, cfg, ns, shard, labels.Everything(), doNothing)
		})
		guard := time.Minute // simulated: many times what this takes
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "order-1", Namespace: ns}}
		want := must(sharding.NewRing(members, 0)).Owner(sharding.RingKey(parent))
		old := members[0]
		if old == want {
			old = members[1]
		}

		gate := &watchGate{path: "/api/v1/namespaces/" + ns + "/configmaps", parent: parent.Name,
			held: make(chan struct{}), release: make(chan struct{}), looked: make(chan struct{}), stop: ctx.Done()}
		gated := rest.CopyConfig(cfg)
		gated.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gatedTransport{gate, rt} }) // one per client the sharder builds
		shard := sharding.Shard{Ring: ring}
		relabels := newChildRelabels(ctx.Done())
		var counts sync.Map
		startSharder(ctx, t, &wg, gated, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.Resources = append(sc.Resources, corev1.SchemeGroupVersion.WithResource("secrets"))
			sc.OnLabel = relabels.onLabel(parent.Name+"-child", shard, func() (map[string]string, error) {
				p := &corev1.ConfigMap{}
				err := core.Get().Namespace(ns).Resource("configmaps").Name(parent.Name).Do(context.Background()).Into(p)
				return p.Labels, err
			})
		})
		receive(t, gate.held, guard) // the sharder listed the ConfigMaps; their watch is held

		parent.Labels = map[string]string{shard.Label(): old}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: parent.Name + "-child", Namespace: ns,
			Labels:          map[string]string{shard.Label(): old},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("secrets").Body(child).Do(ctx).Error())

		// The sharder either acts on the child at once, or looks its parent
		// up first and waits for its cache: then the watch goes on.
		select {
		case <-gate.looked:
		case member := <-relabels.moved:
			require.Empty(t, relabels.aheadSoFar(), "the child was relabelled (toward %s) before the sharder had seen its parent", member)
		case <-time.After(guard):
			t.Fatalf("the sharder did nothing with the child within %v", guard)
		}
		close(gate.release)
		for member := receive(t, relabels.moved, guard); member != want; member = receive(t, relabels.moved, guard) {
		}
		require.Empty(t, relabels.aheadSoFar(), "the child ran ahead of its parent")
	})
}

// childRelabels follows the sharder's relabels of one child, through
// its OnLabel hook: each relabel's member goes to moved (a send waits
// for the test, or for stop), and one made toward another member than
// the one the parent's label names on the server at that moment is
// noted as ahead of its parent.
type childRelabels struct {
	moved chan string
	stop  <-chan struct{}

	mu    sync.Mutex
	ahead []string
}

func newChildRelabels(stop <-chan struct{}) *childRelabels {
	return &childRelabels{moved: make(chan string, 8), stop: stop}
}

// onLabel is an OnLabel hook that follows the child named child of
// shard, reading its parent's labels with parentLabels.
func (c *childRelabels) onLabel(child string, shard sharding.Shard, parentLabels func() (map[string]string, error)) func(string, informer.Key, string) {
	return func(action string, key informer.Key, member string) {
		if key.Name != child {
			return
		}
		if l, err := parentLabels(); err == nil {
			if owner := l[shard.Label()]; owner != "" && owner != member {
				c.mu.Lock()
				c.ahead = append(c.ahead, fmt.Sprintf("the child was %q toward %s while its parent was labelled %s (drain %q)",
					action, member, owner, l[shard.DrainLabel()]))
				c.mu.Unlock()
			}
		}
		select {
		case c.moved <- member:
		case <-c.stop:
		}
	}
}

// aheadSoFar is what was noted ahead of the parent so far.
func (c *childRelabels) aheadSoFar() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ahead)
}

// watchGate is shared by the sharder's clients. It holds the WATCH of
// the collection path until release is closed, and closes looked when
// the sharder reads the object parent of that collection from the server.
type watchGate struct {
	path, parent string

	held, release, looked chan struct{}
	stop                  <-chan struct{} // the test's end
	heldOnce, lookedOnce  sync.Once
}

// gatedTransport is one client's transport, next, behind the gate.
type gatedTransport struct {
	g    *watchGate
	next http.RoundTripper
}

func (t gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := t.g
	switch {
	case req.URL.Path == g.path && req.URL.Query().Get("watch") == "true":
		g.heldOnce.Do(func() { close(g.held) })
		select {
		case <-g.release:
		case <-g.stop:
		}
	case req.Method == http.MethodGet && req.URL.Path == g.path+"/"+g.parent && !strings.Contains(req.URL.RawQuery, "watch"):
		g.lookedOnce.Do(func() { close(g.looked) })
	}
	return t.next.RoundTrip(req)
}
