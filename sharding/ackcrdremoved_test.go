package sharding_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// A drained custom resource whose CRD is deleted is gone with it, and
// the PATCH that would let it go is answered 404 with no Status (the
// path is no longer served). That is no failure: nothing is left to let
// go. (Found by a review of a fix that took such a 404 for a failure, to
// catch a resource misnamed in Reconciler, which is answered the same:
// every acknowledgement then failed, retried for good, for as long as the
// member's cache held the object.)
func TestAnAcknowledgementAfterItsCRDWasDeletedIsNoFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gv := schema.GroupVersion{Group: "zoo.example.com", Version: "v1"}
		gr := schema.GroupResource{Group: gv.Group, Resource: "octopodes"}
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		t.Cleanup(mem.Close)
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: gv.Group, Version: gv.Version, Kind: "Octopus", Plural: "octopodes"}))

		scheme := runtime.NewScheme()
		metav1.AddToGroupVersion(scheme, gv)
		cfg := rest.CopyConfig(mem.Config())
		cfg.APIPath, cfg.GroupVersion, cfg.ContentType = "/apis", &gv, runtime.ContentTypeJSON
		cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
		cfg.QPS = -1
		client := must(rest.RESTClientFor(cfg))

		shard := sharding.Shard{Ring: ring, Member: "a"}
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(gv.String())
		obj.SetKind("Octopus")
		obj.SetNamespace("default")
		obj.SetName("inky")
		obj.SetLabels(map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"})
		body := must(json.Marshal(obj.Object))
		raw := must(client.Post().Namespace("default").Resource("octopodes").Body(body).Do(t.Context()).Raw())
		created := &unstructured.Unstructured{}
		require.NoError(t, json.Unmarshal(raw, &created.Object))

		idx := must(indexer.New(indexer.Options[*unstructured.Unstructured]{}))
		require.NoError(t, idx.Add(created)) // the member's cache, drained
		objects := must(lister.New(idx, gr))

		_, err := srv.RemoveCRD(gr) // the CRD and every octopus with it
		require.NoError(t, err)

		reconcile := sharding.Reconciler(shard, objects, client, "octopodes",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		_, err = reconcile(t.Context(), informer.KeyFor(created))
		require.NoError(t, err, "the object was deleted with its CRD: there is no drain left to acknowledge, yet the call fails (KeepRetrying)")
	})
}
