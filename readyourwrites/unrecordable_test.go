package readyourwrites_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/testenv"
)

// A Cache tracked after its guard closed (with OpaqueResourceVersions:
// the last term's guard, kept by mistake) cannot record, and says so.
// It must say so before sending: a write the server stored but Write
// reports as failed is sent again by the retry, and a generateName
// create makes a second object. (Found by a review: the create was
// sent, stored, and then reported as failed.)
func TestAWriteThroughACacheThatCannotRecordIsNotSent(t *testing.T) {
	server := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(server)
	t.Cleanup(mem.Close)
	core := must(testenv.CoreV1Client(mem.Config()))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(context.Background()).Error())
	inf, _ := newCache(t)
	run(t, inf)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "unrecordable", OpaqueResourceVersions: true}))
	guard.Close()
	cms := readyourwrites.Track(guard, inf)

	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", GenerateName: "child-"}}
	err := cms.Write(context.Background(), owner, core.Post().Namespace("demo").Resource("configmaps").Body(child), &corev1.ConfigMap{})
	require.ErrorContains(t, err, "the guard is closed")
	require.Empty(t, server.Objects(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}),
		"the write was sent although nothing could record it; its retry makes a second child")
}

// Delete, like Write, says before sending that a Cache that cannot
// record cannot record it: sent and reported as done, the delete would
// leave the next reconcile free to read a cache that still shows the
// object. (Found by a review: the delete was sent, and nil returned.)
func TestADeleteThroughACacheThatCannotRecordIsNotSent(t *testing.T) {
	server := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(server)
	t.Cleanup(mem.Close)
	core := must(testenv.CoreV1Client(mem.Config()))
	ctx := context.Background()
	require.NoError(t, core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}).Do(ctx).Error())
	require.NoError(t, core.Post().Namespace("demo").Resource("configmaps").Body(configMap("child")).Do(ctx).Error())
	inf, _ := newCache(t)
	run(t, inf)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "unrecordable", OpaqueResourceVersions: true}))
	guard.Close()
	cms := readyourwrites.Track(guard, inf)

	err := cms.Delete(ctx, owner, informer.Key{Namespace: "demo", Name: "child"}, core.Delete().Namespace("demo").Resource("configmaps").Name("child"))
	require.ErrorContains(t, err, "the guard is closed")
	require.Len(t, server.Objects(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}), 1,
		"the delete was sent although nothing could record it")
}

// Deleted, like Wrote, says when it cannot record: a caller that sent
// its DELETE itself and records it afterwards must learn that the next
// reconcile of its owner is not held for it. (Left by an earlier
// session as an API change; a call that ignores the result compiles as
// before.)
func TestDeletedThroughACacheThatCannotRecordSaysSo(t *testing.T) {
	inf, _ := newCache(t)
	run(t, inf)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "unrecordable", OpaqueResourceVersions: true}))
	guard.Close()
	cms := readyourwrites.Track(guard, inf)

	err := cms.Deleted(owner, informer.Key{Namespace: "demo", Name: "child"}, "uid-1", nil)
	require.ErrorContains(t, err, "the guard is closed")
}
