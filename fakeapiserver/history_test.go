package fakeapiserver_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// An exact LIST at any resourceVersion since the last compaction shows
// the state then: each write up to it applied, none after it, and no
// other resource's. Checked at every write's resourceVersion, before a
// compaction and after it (then rebuilt from the state at the
// compaction); one from before the compaction answers 410.
func TestAListAtAnOlderResourceVersionShowsTheStateThen(t *testing.T) {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	client, err := testenv.CoreV1Client(mem.Config())
	require.NoError(t, err)
	ctx := context.Background()

	// A snapshot is the ConfigMaps' names and resourceVersions after a write.
	type snapshot struct {
		rv    string
		state map[string]string
	}
	var snapshots []snapshot
	state := map[string]string{}
	record := func(rv string) {
		copied := map[string]string{}
		for k, v := range state {
			copied[k] = v
		}
		snapshots = append(snapshots, snapshot{rv, copied})
	}
	create := func(name string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Into(cm))
		state[name] = cm.ResourceVersion
		record(cm.ResourceVersion)
	}
	update := func(name string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": strconv.Itoa(len(snapshots))}}
		require.NoError(t, client.Put().Namespace("default").Resource("configmaps").Name(name).Body(cm).Do(ctx).Into(cm))
		state[name] = cm.ResourceVersion
		record(cm.ResourceVersion)
	}
	remove := func(name string) {
		require.NoError(t, client.Delete().Namespace("default").Resource("configmaps").Name(name).Do(ctx).Error())
		delete(state, name)
		record(srv.ResourceVersionString())
	}
	otherResource := func(name string) { // moves the resourceVersion, not the ConfigMaps
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, client.Post().Namespace("default").Resource("secrets").Body(s).Do(ctx).Into(s))
		record(s.ResourceVersion)
	}
	create("a")
	create("b")
	update("a")
	otherResource("s1")
	remove("b")
	create("c")
	update("c")
	otherResource("s2")
	create("b")
	remove("a")

	listAt := func(rv string) (map[string]string, error) {
		var list corev1.ConfigMapList
		err := client.Get().Namespace("default").Resource("configmaps").
			VersionedParams(&metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, metav1.ParameterCodec).
			Do(ctx).Into(&list)
		got := map[string]string{}
		for _, cm := range list.Items {
			got[cm.Name] = cm.ResourceVersion
		}
		return got, err
	}
	check := func(from int) {
		t.Helper()
		for _, s := range snapshots[from:] {
			got, err := listAt(s.rv)
			require.NoError(t, err, "at %s", s.rv)
			require.Equal(t, s.state, got, "the state at %s", s.rv)
		}
	}
	check(0)

	const at = 4 // compacted at the fifth write's resourceVersion (b's delete)
	rv, err := strconv.ParseInt(snapshots[at].rv, 10, 64)
	require.NoError(t, err)
	require.Equal(t, rv, srv.Compact(rv))
	check(at)
	_, err = listAt(snapshots[at-1].rv)
	require.True(t, apierrors.IsResourceExpired(err), "a list from before the compaction: %v", err)

	// Compacted at the latest write, the state then must not follow the
	// writes after it (the simulator found a continued LIST showing an
	// object newer than its first page: the state at the compaction was
	// the live objects' map, which later writes changed).
	latest := len(snapshots) - 1
	rv, err = strconv.ParseInt(snapshots[latest].rv, 10, 64)
	require.NoError(t, err)
	require.Equal(t, rv, srv.Compact(rv))
	update("b")
	create("d")
	remove("c")
	check(latest)
}

// A watch nobody reads holds up no write: a thousand creates return
// while its connection is full, and its events then come, every one, in
// resourceVersion order. In a bubble, a write that waited for the reader
// would leave every goroutine blocked, and synctest would fail the test.
func TestWritesNeverWaitForAWatchThatIsNotReadAndItGetsEveryEventInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const writes = 1000
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		ctx := t.Context()
		w, err := client.Get().Namespace("default").Resource("configmaps").
			VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: srv.ResourceVersionString()}, metav1.ParameterCodec).Watch(ctx)
		require.NoError(t, err)
		defer w.Stop()

		writeAll(ctx, t, client, writes)
		synctest.Wait() // the watch's connection is full; nothing waits on it but the watch itself

		last := int64(0)
		for i := range writes {
			ev := <-w.ResultChan()
			require.Equal(t, watch.Added, ev.Type, "event %d", i)
			cm := ev.Object.(*corev1.ConfigMap)
			require.Equal(t, fmt.Sprintf("cm-%04d", i), cm.Name)
			rv, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
			require.NoError(t, err)
			require.Greater(t, rv, last, "event %d comes after event %d's resourceVersion", i, i-1)
			last = rv
		}
	})
}

func writeAll(ctx context.Context, t *testing.T, client *rest.RESTClient, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
	}
}
