package readyourwrites

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// relistAPI serves a list the test sets, at opaque versions, and a new
// FakeWatcher for every watch; expire ends the current watch with 410
// Gone, so the informer relists.
type relistAPI struct {
	mu       sync.Mutex
	items    []*corev1.ConfigMap
	listRV   string
	watchers chan *watch.FakeWatcher
}

func (a *relistAPI) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*corev1.ConfigMap
	for _, cm := range a.items {
		out = append(out, cm.DeepCopy())
	}
	return out, metav1.ListMeta{ResourceVersion: a.listRV}, nil
}

func (a *relistAPI) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(100, false)
	a.watchers <- w
	return w, nil
}

func (a *relistAPI) setList(rv string, items ...*corev1.ConfigMap) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listRV, a.items = rv, items
}

// expire ends w with 410 Gone and returns the next watch, which the
// informer opens after it relisted.
func (a *relistAPI) expire(t *testing.T, w *watch.FakeWatcher) *watch.FakeWatcher {
	t.Helper()
	status := apierrors.NewResourceExpired("too old resource version").Status()
	w.Error(&status)
	w.Stop()
	select {
	case next := <-a.watchers:
		return next
	case <-time.After(time.Minute):
		t.Fatal("the informer did not watch again")
		return nil
	}
}

func relistScripted(t *testing.T) (*si.Informer[*corev1.ConfigMap], *relistAPI, *watch.FakeWatcher) {
	t.Helper()
	api := &relistAPI{listRV: "L1", watchers: make(chan *watch.FakeWatcher, 10)}
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	require.NoError(t, si.WaitForCacheSync(wctx, inf))
	var w *watch.FakeWatcher
	select {
	case w = <-api.watchers:
	case <-wctx.Done():
		t.Fatal("the informer did not watch")
	}
	return inf, api, w
}

// A server that counts resourceVersions per object (the audience of
// OpaqueResourceVersions) deletes child uid-1 and makes it again as
// uid-2, which starts again at "1". The informer relists: uid-1 at "1"
// is replaced by uid-2 at "1". Owner A deleted uid-1 and owner B created
// uid-2 (answer at "1"); both were recorded while the cache held uid-1.
// Once the cache holds uid-2 at "1", B's write has arrived and A's
// delete is seen: B is let go. (Found by review: the informer took the
// replaced object for a resync, by its resourceVersion alone, and told
// no handler that does not resync.)
func TestARelistReplacingAnObjectAtTheSameVersionReachesTheArrivalsHandler(t *testing.T) {
	inf, api, w := relistScripted(t)
	g, c, _ := opaqueGuardOn(t, inf, time.Hour)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	w.Add(cmAt("child", "uid-1", "1"))
	untilCached(t, inf, key)

	c.Deleted(ownerA, key, "uid-1", nil)                             // A deletes uid-1
	require.NoError(t, c.Wrote(ownerB, cmAt("child", "uid-2", "1"))) // B makes child again: uid-2 at "1"
	heldA, _, _ := g.Hold(ownerA)
	require.True(t, heldA)
	heldB, _, _ := g.Hold(ownerB)
	require.True(t, heldB)

	// The watch is cut off; the relist finds uid-2 at "1".
	api.setList("L2", cmAt("child", "uid-2", "1"), cmAt("marker", "uid-m", "1"))
	require.NoError(t, c.Wrote(ownerM, cmAt("marker", "uid-m", "1")))
	api.expire(t, w)
	untilReleased(t, g, ownerM) // the handler has been told of the relist
	cached, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	require.Equal(t, "uid-2", string(cached.GetUID()))
	require.Equal(t, "1", cached.GetResourceVersion())

	held, _, _ := g.Hold(ownerB)
	require.False(t, held, "B is held though the cache holds child uid-2 at \"1\", exactly B's write: the relist's Replaced delta with an unchanged resourceVersion is taken for a resync, so the arrivals handler is never told of uid-2")
}
