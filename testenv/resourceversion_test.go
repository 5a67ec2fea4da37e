package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/testenv"
)

// These tests pin down, on a real etcd and kube-apiserver, what chapter 02
// says about resourceVersion. The shared control plane has other writers
// (the apiserver's own leases and events), so a resourceVersion may skip
// numbers between two of ours; it never goes back or stands still.

// Writes to different objects, of different resources, all take the next
// etcd revision: each write's resourceVersion is newer than the one before
// it. An object carries the revision of its last write, and a list carries
// the revision it shows, at least as new as every write before it.
func TestEveryWriteOfAnyObjectTakesANewerResourceVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())

	var rvs []int64
	a := createConfigMap(ctx, t, client, ns, "a")
	rvs = append(rvs, mustParseRV(t, a.ResourceVersion))
	s := &corev1.Secret{}
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").
		Body(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}).Do(ctx).Into(s))
	rvs = append(rvs, mustParseRV(t, s.ResourceVersion))
	a.Data = map[string]string{"k": "changed"}
	updated := &corev1.ConfigMap{}
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("a").Body(a).Do(ctx).Into(updated))
	rvs = append(rvs, mustParseRV(t, updated.ResourceVersion))
	b := createConfigMap(ctx, t, client, ns, "b")
	rvs = append(rvs, mustParseRV(t, b.ResourceVersion))
	for n := 1; n < len(rvs); n++ {
		assert.Greater(t, rvs[n], rvs[n-1], "write %d (of another object or resource) takes a newer revision than write %d", n, n-1)
	}

	got := &corev1.ConfigMap{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Name("a").Do(ctx).Into(got))
	assert.Equal(t, updated.ResourceVersion, got.ResourceVersion, "an object carries its last write's revision")

	list := &corev1.ConfigMapList{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list))
	assert.GreaterOrEqual(t, mustParseRV(t, list.ResourceVersion), rvs[len(rvs)-1], "a consistent list shows every write made before it")
	byName := map[string]string{}
	for _, item := range list.Items {
		byName[item.Name] = item.ResourceVersion
	}
	assert.Equal(t, map[string]string{"a": updated.ResourceVersion, "b": b.ResourceVersion}, byName, "each listed object at its last write's revision")
}

// A watch from a list's resourceVersion N replays nothing the list already
// held and streams each change after N, in order, each event carrying the
// object at the revision of that change.
func TestAWatchFromNStreamsEachLaterChangeWithTheObjectAtItsNewResourceVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())
	a := createConfigMap(ctx, t, client, ns, "a")
	createConfigMap(ctx, t, client, ns, "b")
	list := &corev1.ConfigMapList{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list))

	c := createConfigMap(ctx, t, client, ns, "c")
	a.Data = map[string]string{"k": "changed"}
	updated := &corev1.ConfigMap{}
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("a").Body(a).Do(ctx).Into(updated))
	require.NoError(t, client.Delete().Namespace(ns).Resource("configmaps").Name("b").Do(ctx).Error())

	w, err := watchConfigMaps(ctx, client, ns, list.ResourceVersion)
	require.NoError(t, err)
	defer w.Stop()
	type seen struct {
		typ  watch.EventType
		name string
		rv   int64
	}
	var got []seen
	for range 3 {
		ev := nextEvent(t, w, hangGuard)
		obj, ok := ev.Object.(*corev1.ConfigMap)
		require.True(t, ok, "%v event with a %T", ev.Type, ev.Object)
		got = append(got, seen{ev.Type, obj.Name, mustParseRV(t, obj.ResourceVersion)})
	}
	require.Equal(t, []watch.EventType{watch.Added, watch.Modified, watch.Deleted}, []watch.EventType{got[0].typ, got[1].typ, got[2].typ})
	require.Equal(t, []string{"c", "a", "b"}, []string{got[0].name, got[1].name, got[2].name}, "only the changes after the list, in order")
	assert.Equal(t, mustParseRV(t, c.ResourceVersion), got[0].rv, "the added object at its create's revision")
	assert.Equal(t, mustParseRV(t, updated.ResourceVersion), got[1].rv, "the modified object at its update's revision")
	assert.Greater(t, got[2].rv, got[1].rv, "the deleted object at the delete's revision, newer than every earlier change")
}

// A BOOKMARK is no change: its object carries a resourceVersion and
// nothing else, newer than where the watch started. Here a watch for
// app=x sees none of the write that moves the collection on, and hears of
// it only as a bookmark (the watch cache sends one shortly before
// timeoutSeconds ends the watch).
func TestABookmarkCarriesNoChangeOnlyANewerResourceVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())
	list := &corev1.ConfigMapList{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list))
	timeout := int64(5)
	w, err := client.Get().Namespace(ns).Resource("configmaps").VersionedParams(&metav1.ListOptions{
		Watch: true, ResourceVersion: list.ResourceVersion, LabelSelector: "app=x",
		AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
	}, metav1.ParameterCodec).Watch(ctx)
	require.NoError(t, err)
	defer w.Stop()
	createConfigMap(ctx, t, client, ns, "unlabelled") // not app=x: no event, but the revision moves

	ev := nextEvent(t, w, hangGuard)
	require.Equal(t, watch.Bookmark, ev.Type, "the unlabelled write is not an event of this watch")
	obj, ok := ev.Object.(*corev1.ConfigMap)
	require.True(t, ok, "a bookmark's object is of the watched kind, here a %T", ev.Object)
	assert.Greater(t, mustParseRV(t, obj.ResourceVersion), mustParseRV(t, list.ResourceVersion), "newer than where the watch started")
	assert.Empty(t, obj.Name, "no object: a bookmark names none")
	assert.Empty(t, obj.Data, "no change: a bookmark carries no content")
}
