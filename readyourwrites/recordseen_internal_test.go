package readyourwrites

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	si "github.com/listwatch/informer/sharedinformer"
)

// With OpaqueResourceVersions, a DELETE that only marked its object
// (finalizers), recorded once the cache no longer holds the object (its
// finalizer was removed and the delete applied before the answer was
// recorded), is seen at once, so the guard keeps nothing (Pending is 0);
// but the arrivals handler keeps waiting for that version for good: the
// record returns early without telling the cache it is no longer waited
// for. The package doc promises "memory follows the writes in flight, not
// the writes made". (Found by a review.)
func TestARecordSeenAtOnceLeavesNothingWaitingInItsCache(t *testing.T) {
	inf := runningInformer(t)
	g, err := New(Options{OpaqueResourceVersions: true})
	require.NoError(t, err)
	c := Track(g, inf)
	owner := informer.Key{Namespace: "demo", Name: "web"}
	now := metav1.Now()
	for i := range 100 {
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child-" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			UID: "uid", ResourceVersion: "7", DeletionTimestamp: &now, Finalizers: []string{"f"}}}
		c.Deleted(owner, informer.KeyFor(child), child.UID, child) // the cache holds no such object
	}
	require.Zero(t, g.Pending(), "the guard keeps nothing: every record was seen")
	c.arrivals.mu.Lock()
	waiting := len(c.arrivals.waiting)
	c.arrivals.mu.Unlock()
	require.Zero(t, waiting, "keys the opaque cache still waits for, though the guard dropped every record")
}

// runningInformer is an informer of ConfigMaps over an empty in-memory
// API, running until the test ends.
func runningInformer(t *testing.T) *si.Informer[*corev1.ConfigMap] {
	t.Helper()
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: memlistwatch.New[*corev1.ConfigMap]()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	require.NoError(t, si.WaitForCacheSync(ctx, inf))
	return inf
}
