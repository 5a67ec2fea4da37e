package sharding_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharding"
)

// TestAChildWhoseParentTheSharderHasNotSeenYetWaitsForIt, with a
// cluster-scoped parent: a Namespace, sharded, controlling a Secret in
// it. The sharder's watch of Namespaces is held, so it sees the child
// before its parent. It looks a missing owner up only in the child's
// namespace (ownerLags), does not find a cluster-scoped one there, and
// takes the child for an orphan: it drains it toward the ring's member
// of the child's own ring key while its parent sits on another member.
// A known limit (docs/16-sharding.md, "What it does not guarantee"); the
// package doc once promised that such a parent "is waited for, never
// taken for absent".
func TestAChildOfAClusterScopedParentTheSharderHasNotSeenYetIsTakenForAnOrphan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, nil)
		guard := time.Minute // simulated: many times what this takes
		parent := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "order-1"}}
		child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "order-1-child", Namespace: ns}}
		// The ring's member of the child's key taken as an orphan's
		// (its namespace and its owner's name): the child starts on the
		// other member, with its parent, so a drain toward this one runs
		// ahead of the parent.
		orphanWant := must(sharding.NewRing(members, 0)).Owner(ns + "/" + parent.Name)
		old := members[0]
		if old == orphanWant {
			old = members[1]
		}

		gate := &watchGate{path: "/api/v1/namespaces", parent: parent.Name,
			held: make(chan struct{}), release: make(chan struct{}), looked: make(chan struct{}), stop: ctx.Done()}
		gated := rest.CopyConfig(cfg)
		gated.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gatedTransport{gate, rt} })
		shard := sharding.Shard{Ring: ring}
		relabels := newChildRelabels(ctx.Done())
		var counts sync.Map
		startSharder(ctx, t, &wg, gated, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.Namespace = "" // a cluster-scoped resource is sharded in every namespace
			sc.Resources = []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("namespaces"), corev1.SchemeGroupVersion.WithResource("secrets")}
			sc.OnLabel = relabels.onLabel(child.Name, shard, func() (map[string]string, error) {
				p := &corev1.Namespace{}
				err := core.Get().Resource("namespaces").Name(parent.Name).Do(context.Background()).Into(p)
				return p.Labels, err
			})
		})
		receive(t, gate.held, guard) // the sharder listed the Namespaces; their watch is held

		parent.Labels = map[string]string{shard.Label(): old}
		require.NoError(t, core.Post().Resource("namespaces").Body(parent).Do(ctx).Into(parent))
		child.Labels = map[string]string{shard.Label(): old}
		child.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("Namespace"))}
		require.NoError(t, core.Post().Namespace(ns).Resource("secrets").Body(child).Do(ctx).Error())

		select {
		case <-gate.looked:
			t.Fatal("the sharder looked the cluster-scoped parent up: the limit is gone, and the docs that name it are wrong")
		case <-relabels.moved:
		case <-time.After(guard):
			t.Fatalf("the sharder did nothing with the child within %v", guard)
		}
		ahead := relabels.aheadSoFar()
		require.NotEmpty(t, ahead, "the child was relabelled toward its parent's member: the limit is gone, and the docs that name it are wrong")
		t.Log(ahead[0])
		close(gate.release)
	})
}
