package sharedinformer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/sharedinformer"
)

// r4API serves a list the test sets, at versions the test picks, and a
// new FakeWatcher for every watch; expire ends the current watch with
// 410 Gone, so the informer relists.
type r4API struct {
	mu       sync.Mutex
	items    []*corev1.ConfigMap
	listRV   string
	watchers chan *watch.FakeWatcher
}

func (a *r4API) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*corev1.ConfigMap
	for _, cm := range a.items {
		out = append(out, cm.DeepCopy())
	}
	return out, metav1.ListMeta{ResourceVersion: a.listRV}, nil
}

func (a *r4API) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(100, false)
	a.watchers <- w
	return w, nil
}

func (a *r4API) setList(rv string, items ...*corev1.ConfigMap) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listRV, a.items = rv, items
}

func (a *r4API) nextWatch(t *testing.T) *watch.FakeWatcher {
	t.Helper()
	select {
	case w := <-a.watchers:
		return w
	case <-time.After(hangGuard):
		t.Fatal("the informer did not watch")
		return nil
	}
}

func (a *r4API) expire(t *testing.T, w *watch.FakeWatcher) *watch.FakeWatcher {
	t.Helper()
	status := apierrors.NewResourceExpired("too old resource version").Status()
	w.Error(&status)
	w.Stop()
	return a.nextWatch(t)
}

func r4CM(name string, uid types.UID, rv string) *corev1.ConfigMap {
	cm := configMap(name)
	cm.UID, cm.ResourceVersion = uid, rv
	return cm
}

// r4Scripted runs an informer over a scripted API with rec registered
// (no resync), synced on an empty list at "L1", and returns its watch.
func r4Scripted(t *testing.T, rec sharedinformer.Handler[*corev1.ConfigMap]) (*cmInformer, *r4API, *watch.FakeWatcher) {
	t.Helper()
	api := &r4API{listRV: "L1", watchers: make(chan *watch.FakeWatcher, 10)}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf, reg)
	return inf, api, api.nextWatch(t)
}

func r4WaitFor(t *testing.T, rec *uidRecorder, last string) []string {
	t.Helper()
	require.Eventually(t, func() bool {
		calls := rec.snapshot()
		return len(calls) > 0 && calls[len(calls)-1] == last
	}, hangGuard, 5*time.Millisecond, "%q never reached the handler: %q", last, rec.snapshot())
	return rec.snapshot()
}

// ae606e5 dropped the UID clause from process.go's same-version resync
// test, saying "a UID change never reaches it". It does when one side
// has no UID (replacedByAnother needs both): the cache holds "a" with no
// UID at "5"; a relist finds "a" as uid-2, also at "5" (a server that
// counts versions per object). Before ae606e5 the UIDs differed, so
// every handler heard OnUpdate; now it is taken for a resync and a
// handler with no resync never hears of uid-2 at all.
func TestARelistGivingAnObjectWithNoUIDAUIDAtTheSameVersionReachesHandlers(t *testing.T) {
	rec := &uidRecorder{}
	inf, api, w := r4Scripted(t, rec)
	w.Add(r4CM("a", "", "5"))
	r4WaitFor(t, rec, "add ")

	// The marker comes on the watch opened after the relist was handed
	// over whole: the handler hears it after all the relist told.
	api.setList("L2", r4CM("a", "uid-2", "5"))
	api.expire(t, w).Add(r4CM("marker", "uid-m", "6"))
	calls := r4WaitFor(t, rec, "add uid-m")

	cached, ok := inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.True(t, ok)
	require.Equal(t, "uid-2", string(cached.UID))
	require.Greater(t, len(calls), 2,
		"the cache now holds uid-2 where it held an object with no UID, at the same resourceVersion, but the handler heard nothing of it (%q): the relist was taken for a resync", calls)
}

// The mirror case: the cache holds uid-1 at "5"; a relist finds "a" with
// no UID at "5". Before ae606e5 this was an update to every handler.
func TestARelistGivingAnObjectOfAUIDNoUIDAtTheSameVersionReachesHandlers(t *testing.T) {
	rec := &uidRecorder{}
	_, api, w := r4Scripted(t, rec)
	w.Add(r4CM("a", "uid-1", "5"))
	r4WaitFor(t, rec, "add uid-1")

	api.setList("L2", r4CM("a", "", "5"))
	api.expire(t, w).Add(r4CM("marker", "uid-m", "6"))
	calls := r4WaitFor(t, rec, "add uid-m")
	require.Greater(t, len(calls), 2,
		"the cache replaced uid-1 by an object with no UID at the same resourceVersion, but the handler heard nothing of it (%q)", calls)
}

// 2cd989a made a relist that finds a rejected (transform) object of a new
// UID delete the old one: "as the watch's DELETE and rejected ADD would".
// The same relist with the IndexFunc rejecting the new object keeps
// uid-1, which the server deleted, in the cache forever, and no handler
// hears of the delete: apply's indexer.Update fails before the new
// delete-and-add split is reached. On the watch path the DELETE removes
// uid-1 and the rejected ADD caches nothing.
func TestARelistFindingAnIndexRejectedObjectOfANewUIDDoesNotKeepTheDeletedObject(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		OnError: func(error) {},
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"owner": func(cm *corev1.ConfigMap) ([]string, error) {
			if cm.Data["bad"] != "" {
				return nil, errors.New("rejected")
			}
			return []string{"ok"}, nil
		}},
	})
	rec := &uidRecorder{}
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	a := configMap("a")
	a.UID = "uid-1"
	_, err = lw.Create(a)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf, reg)

	key := informer.Key{Namespace: "default", Name: "a"}
	lw.Disconnect()
	require.NoError(t, lw.Delete(key))
	again := configMap("a")
	again.UID = "uid-2"
	again.Data = map[string]string{"bad": "yes"}
	_, err = lw.Create(again)
	require.NoError(t, err)
	rv := lw.Compact()
	lw.Reconnect()
	// The relist is applied whole (its tombstones included) before the
	// marker is made: the handler hears the marker after all it told.
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, inf.WaitFor(ctx, rv))
	marker := configMap("marker")
	marker.UID = "uid-m"
	_, err = lw.Create(marker)
	require.NoError(t, err)
	calls := r4WaitFor(t, rec, "add uid-m")

	if cached, ok := inf.Indexer().Get(key); ok {
		require.NotEqual(t, "uid-1", string(cached.UID),
			"the cache still holds uid-1, which the server deleted (handler heard %q): the relist's update to the index-rejected uid-2 failed and left the deleted object in place", calls)
	}
	require.Contains(t, calls, "delete uid-1 (final state unknown)")
}
