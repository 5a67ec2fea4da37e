package fakeapiserver_test

import (
	"context"
	"fmt"
	"net/http"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// A client-go REST client talks to the fake over the in-memory network:
// writes take resourceVersions from one counter, and a stale write is
// refused with 409 Conflict, as from kube-apiserver.
func Example() {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	client, _ := testenv.CoreV1Client(mem.Config())
	ctx := context.Background()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}
	created := &corev1.ConfigMap{}
	_ = client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Into(created)
	fmt.Println("created at", created.ResourceVersion)

	created.Data["k"] = "2"
	updated := &corev1.ConfigMap{}
	_ = client.Put().Namespace("default").Resource("configmaps").Name("a").Body(created).Do(ctx).Into(updated)
	fmt.Println("updated at", updated.ResourceVersion)

	err := client.Put().Namespace("default").Resource("configmaps").Name("a").Body(created).Do(ctx).Error()
	fmt.Println("stale write is a conflict:", apierrors.IsConflict(err))
	// Output:
	// created at 6
	// updated at 7
	// stale write is a conflict: true
}

// A PUT to a missing Lease creates it, whatever resourceVersion it
// carries, as kube-apiserver's Lease strategy allows; only a uid in the
// body (a precondition no missing object meets) makes it a conflict.
// The conformance test checks both against the real server.
func ExampleServer_leaseCreateOnUpdate() {
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	defer mem.Close()
	scheme := runtime.NewScheme()
	_ = coordinationv1.AddToScheme(scheme)
	cfg := mem.Config()
	cfg.APIPath, cfg.GroupVersion = "/apis", &coordinationv1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, _ := rest.RESTClientFor(cfg)
	put := func(lease *coordinationv1.Lease) {
		var code int
		client.Put().Namespace("default").Resource("leases").Name(lease.Name).Body(lease).Do(context.Background()).StatusCode(&code)
		fmt.Println(lease.Name, code, http.StatusText(code))
	}
	put(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "guarded", ResourceVersion: "42"}})
	put(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "with-uid", UID: "00000000-0000-0000-0000-000000000001"}})
	// Output:
	// guarded 201 Created
	// with-uid 409 Conflict
}

// Compaction makes a watch from before it impossible: one ERROR event,
// 410 Gone, reason Expired; the client must list again.
func ExampleServer_Compact() {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	client, _ := testenv.CoreV1Client(mem.Config())
	ctx := context.Background()
	before := srv.ResourceVersionString()
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_ = client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error()
	}
	fmt.Println("compacted at", srv.Compact(srv.ResourceVersion()))

	w, _ := client.Get().Namespace("default").Resource("configmaps").
		VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: before}, metav1.ParameterCodec).Watch(ctx)
	ev := <-w.ResultChan()
	err := apierrors.FromObject(ev.Object)
	fmt.Println(ev.Type, apierrors.IsResourceExpired(err), err)
	_, open := <-w.ResultChan()
	fmt.Println("still open:", open)
	// Output:
	// compacted at 7
	// ERROR true The resourceVersion for the provided watch is too old.
	// still open: false
}
