package readyourwrites_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// perObjectAPI stands for an aggregated API server whose resourceVersions
// are integers counted per object (each object's 1, 2, 3, ...), not one
// counter for the whole resource as KEP-5504 promises of kube-apiserver.
// It lists web and db, each at its own 3; every later change is an event
// the test sends on watcher. (The test sends only changes whose numbers
// do not go down: a lower one the reflector would take for a server
// restored from a backup, skip and relist.)
type perObjectAPI struct {
	watcher  *watch.FakeWatcher
	once     sync.Once
	watching chan struct{} // closed when the informer has opened its watch
}

func (a *perObjectAPI) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	return []*corev1.ConfigMap{at(configMap("web"), "3"), at(configMap("db"), "3")}, metav1.ListMeta{ResourceVersion: "3"}, nil
}

func (a *perObjectAPI) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	a.once.Do(func() { close(a.watching) })
	return a.watcher, nil
}

// at returns cm at resourceVersion rv.
func at(cm *corev1.ConfigMap, rv string) *corev1.ConfigMap {
	cm.ResourceVersion = rv
	return cm
}

// perObjectCache runs an informer over a perObjectAPI until the test
// ends, and returns it once it has synced and watches.
func perObjectCache(t *testing.T) (*si.Informer[*corev1.ConfigMap], *perObjectAPI) {
	t.Helper()
	api := &perObjectAPI{watcher: watch.NewFake(), watching: make(chan struct{})}
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	run(t, inf)
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	require.NoError(t, si.WaitForCacheSync(ctx, inf))
	select {
	case <-api.watching:
	case <-ctx.Done():
		t.Fatal("the informer did not watch")
	}
	return inf, api
}

// writeDBThenSeeWebMove records that owner's reconcile wrote db, answered
// at db's resourceVersion 4, and lets the cache apply a change of web, at
// web's own 4, but not the write: the cache still holds db at 3.
func writeDBThenSeeWebMove(t *testing.T, inf *si.Informer[*corev1.ConfigMap], api *perObjectAPI, cms *readyourwrites.Cache[*corev1.ConfigMap]) {
	t.Helper()
	require.NoError(t, cms.Wrote(owner, at(configMap("db"), "4")))
	api.watcher.Modify(at(configMap("web"), "4"))
	require.NoError(t, inf.WaitFor(t.Context(), "4"))
	db, _ := inf.Indexer().Get(informer.Key{Namespace: "demo", Name: "db"})
	require.Equal(t, "3", db.ResourceVersion, "the cache does not hold the write yet")
}

// The guard's default assumes what KEP-5504 promises: a larger integer
// resourceVersion is a later state of the resource. A server that counts
// per object breaks that, and its keys are let go early: web at 4 is taken
// for "the cache has applied 4, so db's 4 too" while it holds db at 3.
func TestByDefaultIntegerResourceVersionsAreTakenAsComparableAcrossObjects(t *testing.T) {
	inf, api := perObjectCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{Clock: workqueue.NewFakeClock(time.Unix(0, 0))}))
	writeDBThenSeeWebMove(t, inf, api, readyourwrites.Track(guard, inf))

	held, _, _ := guard.Hold(owner)
	assert.False(t, held, "released early: what the default assumes of resourceVersions is false here")
}

// With OpaqueResourceVersions the guard compares resourceVersions only
// for equality: a key is held until its cache holds exactly the written
// version, or has held it and moved on, whatever other objects do.
func TestWithOpaqueResourceVersionsAKeyIsHeldUntilItsCacheHoldsTheWrittenVersion(t *testing.T) {
	inf, api := perObjectCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{OpaqueResourceVersions: true, Clock: workqueue.NewFakeClock(time.Unix(0, 0))}))
	cms := readyourwrites.Track(guard, inf)
	writeDBThenSeeWebMove(t, inf, api, cms)

	held, wake, _ := guard.Hold(owner)
	require.True(t, held, "the cache holds db at 3, not the write at 4: web's 4 says nothing about db")
	api.watcher.Modify(at(configMap("db"), "4"))
	waitOn(t, wake)
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "the cache holds db at 4, the written version")

	// The object moves on past the written version before the key is
	// asked again: the write was seen as it arrived, and that stays so.
	require.NoError(t, cms.Wrote(owner, at(configMap("db"), "5")))
	held, wake, _ = guard.Hold(owner)
	require.True(t, held)
	api.watcher.Modify(at(configMap("db"), "5"))
	api.watcher.Modify(at(configMap("db"), "6")) // another writer's
	waitOn(t, wake)
	require.NoError(t, inf.WaitFor(t.Context(), "6"))
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "db at 5 was in the cache, though it holds 6 now")
}

// waitOn waits for a Hold's wake channel, failing the test if it is not
// closed within a minute: a guard against hanging, not a timing.
func waitOn(t *testing.T, wake <-chan struct{}) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(within):
		t.Fatal("the held key was never woken")
	}
}
