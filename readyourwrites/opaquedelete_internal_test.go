package readyourwrites

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// scriptedAPI lists nothing at listRV; every later change is an event the
// test sends on watcher.
type scriptedAPI struct {
	listRV   string
	watcher  *watch.FakeWatcher
	once     sync.Once
	watching chan struct{}
}

func (a *scriptedAPI) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	return nil, metav1.ListMeta{ResourceVersion: a.listRV}, nil
}

func (a *scriptedAPI) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	a.once.Do(func() { close(a.watching) })
	return a.watcher, nil
}

func scriptedCache(t *testing.T, listRV string) (*si.Informer[*corev1.ConfigMap], *scriptedAPI) {
	t.Helper()
	api := &scriptedAPI{listRV: listRV, watcher: watch.NewFake(), watching: make(chan struct{})}
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	require.NoError(t, si.WaitForCacheSync(wctx, inf))
	select {
	case <-api.watching:
	case <-wctx.Done():
		t.Fatal("the informer did not watch")
	}
	return inf, api
}

// opaqueGuard is opaqueGuardOn a scripted informer (scriptedCache).
func opaqueGuard(t *testing.T, maxHold time.Duration) (*si.Informer[*corev1.ConfigMap], *scriptedAPI, *Guard, *Cache[*corev1.ConfigMap], *workqueue.FakeClock) {
	t.Helper()
	inf, api := scriptedCache(t, "1")
	g, c, clock := opaqueGuardOn(t, inf, maxHold)
	return inf, api, g, c, clock
}

// opaqueGuardOn is a guard with OpaqueResourceVersions and maxHold on a
// fake clock, closed at the test's end, and its Cache of inf.
func opaqueGuardOn(t *testing.T, inf *si.Informer[*corev1.ConfigMap], maxHold time.Duration) (*Guard, *Cache[*corev1.ConfigMap], *workqueue.FakeClock) {
	t.Helper()
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	g, err := New(Options{OpaqueResourceVersions: true, MaxHold: maxHold, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(g.Close)
	c := Track(g, inf)
	require.NoError(t, c.trackErr)
	return g, c, clock
}

// reachable is every write c's arrivals keeps: those waiting, and those
// their after reaches.
func reachable[T informer.Object](c *Cache[T]) map[*arrival]bool {
	c.arrivals.mu.Lock()
	defer c.arrivals.mu.Unlock()
	kept := map[*arrival]bool{}
	var walk func([]*arrival)
	walk = func(ws []*arrival) {
		for _, w := range ws {
			if !kept[w] {
				kept[w] = true
				walk(w.after)
			}
		}
	}
	for _, ws := range c.arrivals.waiting {
		walk(ws)
	}
	return kept
}

func cmAt(name string, uid types.UID, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: uid, ResourceVersion: rv}}
}

// untilReleased waits until g no longer holds key, woken by its wake
// channel; it fails after a minute.
func untilReleased(t *testing.T, g *Guard, key informer.Key) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		held, wake, _ := g.Hold(key)
		if !held {
			return
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("%v is still held", key)
		}
	}
}

// With OpaqueResourceVersions, owner A's reconcile creates child
// (uid-1), deletes it, creates it again (uid-2); owner B then deletes
// child, its answer unreadable (UID unknown). B's delete is uid-2's, the
// last object written: it is not seen when uid-1's delete arrives, while
// the cache has applied neither uid-2's create nor its delete. (Found by
// a review: the first UID was taken.)
func TestAnOpaqueDeleteOfUnknownUIDIsNotTakenForAnEarlierObjectsDelete(t *testing.T) {
	inf, api, g, c, _ := opaqueGuard(t, time.Hour)

	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerC := informer.Key{Namespace: "demo", Name: "c"}
	key := informer.Key{Namespace: "demo", Name: "child"}
	require.NoError(t, c.Wrote(ownerA, cmAt("child", "uid-1", "10"))) // create
	c.Deleted(ownerA, key, "uid-1", nil)                              // delete (answered at 11)
	require.NoError(t, c.Wrote(ownerA, cmAt("child", "uid-2", "13"))) // create again
	c.Deleted(ownerB, key, "", nil)                                   // delete (at 14), UID unknown
	require.NoError(t, c.Wrote(ownerC, cmAt("marker", "uid-m", "12")))

	// The cache applies uid-1's create and delete, and a marker after
	// them; not uid-2's create (13) nor its delete (14).
	api.watcher.Add(cmAt("child", "uid-1", "10"))
	api.watcher.Delete(cmAt("child", "uid-1", "11"))
	api.watcher.Add(cmAt("marker", "uid-m", "12"))
	untilReleased(t, g, ownerC) // the arrivals handler has been told of all three

	_, inCache := inf.Indexer().Get(key)
	require.False(t, inCache)
	held, _, _ := g.Hold(ownerB)
	require.True(t, held, "B's delete of child was released: the cache has applied uid-1's delete only, not uid-2's create (13) recorded before B's delete, nor uid-2's delete")
}

// With resourceVersions that are not integers (compared only for
// equality, by the package doc), a delete after a write that was seen
// is let go once the cache no longer holds the object: a version that
// cannot be ordered never counts as "applied", so it is not kept for
// later deletes to wait on. (Found by a review: every such delete waited
// for MaxHold.)
func TestADeleteAfterASeenWriteIsNotHeldWhenResourceVersionsAreNotIntegers(t *testing.T) {
	inf, api := scriptedCache(t, "a0")
	g, err := New(Options{MaxHold: time.Hour, Clock: workqueue.NewFakeClock(time.Unix(0, 0))})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	owner := informer.Key{Namespace: "demo", Name: "web"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(owner, cmAt("child", "uid-1", "a1")))
	api.watcher.Add(cmAt("child", "uid-1", "a1"))
	untilReleased(t, g, owner) // the cache holds child at a1: the write is seen

	c.Deleted(owner, key, "uid-1", nil)
	api.watcher.Delete(cmAt("child", "uid-1", "a2"))
	deadline := time.After(time.Minute)
	for {
		progress := inf.Progress()
		if _, ok := inf.Indexer().Get(key); !ok {
			break
		}
		select {
		case <-progress:
		case <-deadline:
			t.Fatal("the cache never applied the delete")
		}
	}
	held, _, _ := g.Hold(owner)
	require.False(t, held, "the cache has applied the create (seen) and no longer holds child, yet the delete is held (written still keeps %v): it waits for MaxHold and runs counted stale", c.written.rvs)
}

// Likewise the memory kept for later deletes: 1000 writes of objects
// whose versions are not integers, each seen, keep nothing.
func TestWrittenForgetsSeenOpaqueVersions(t *testing.T) {
	inf, api := scriptedCache(t, "a0")
	g, err := New(Options{MaxHold: time.Hour, Clock: workqueue.NewFakeClock(time.Unix(0, 0))})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	owner := informer.Key{Namespace: "demo", Name: "web"}
	for i := range 1000 {
		name := fmt.Sprintf("child-%d", i)
		require.NoError(t, c.Wrote(owner, cmAt(name, types.UID("uid-"+name), fmt.Sprintf("a%d", i+1))))
		api.watcher.Add(cmAt(name, types.UID("uid-"+name), fmt.Sprintf("a%d", i+1)))
	}
	untilReleased(t, g, owner)
	require.Zero(t, g.Pending(), "the guard keeps nothing")
	c.written.mu.Lock()
	n, keys := c.written.n, len(c.written.rvs)
	c.written.mu.Unlock()
	require.LessOrEqual(t, n, 256, "written keeps %d versions of %d keys, all of them in the cache at their written version", n, keys)
}

// With OpaqueResourceVersions and a server whose answers carry no UID
// (an aggregated API server, the audience of the option), a reconcile
// that creates child and deletes it again before the create reaches the
// cache keeps its key held while the cache holds the child. (Found by a
// review: the delete was judged by absence alone.)
func TestAnOpaqueCreateThenDeleteWithoutUIDsStillHoldsTheKey(t *testing.T) {
	inf, api, g, c, _ := opaqueGuard(t, time.Hour)
	owner := informer.Key{Namespace: "demo", Name: "web"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(owner, cmAt("child", "", "10"))) // create, answered without a UID
	c.Deleted(owner, key, "", nil)                              // delete (at 11)

	api.watcher.Add(cmAt("child", "", "10")) // the create arrives; the delete has not
	untilCached(t, inf, key)
	deadline := time.After(5 * time.Second)
	for {
		held, wake, _ := g.Hold(owner)
		require.True(t, held, "owner was released while the cache holds child, which its reconcile deleted (the delete at 11 has not arrived)")
		select {
		case <-wake:
			continue
		case <-deadline:
		}
		break
	}
}

func untilCached(t *testing.T, inf *si.Informer[*corev1.ConfigMap], key informer.Key) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		progress := inf.Progress()
		if _, ok := inf.Indexer().Get(key); ok {
			return
		}
		select {
		case <-progress:
		case <-deadline:
			t.Fatal("never cached")
		}
	}
}
