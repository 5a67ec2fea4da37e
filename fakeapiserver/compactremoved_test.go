package fakeapiserver_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/listwatch/informer/fakeapiserver"
)

// A CRD removed and compacted away must not come back with its old
// objects. A review proved it did: Compact rebuilt the state at the
// compaction only for the resources served then, so a removed CRD's kept
// the objects it had at an earlier compaction while the history of their
// deletion was dropped; installed again, an exact LIST (or a continued
// one) at an older resourceVersion showed the deleted objects again,
// which the simulator would have blamed on an informer.
func TestACRDRemovedAndCompactedAwayDoesNotBringBackItsObjects(t *testing.T) {
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	defer mem.Close()
	ctx := context.Background()
	crd := fakeapiserver.CRD{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets"}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	require.NoError(t, srv.InstallCRD(crd))
	dc, err := dynamic.NewForConfig(mem.Config())
	require.NoError(t, err)
	widgets := dc.Resource(gvr).Namespace("default")
	create := func(name string) string {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		u.SetName(name)
		got, err := widgets.Create(ctx, u, metav1.CreateOptions{})
		require.NoError(t, err)
		return got.GetResourceVersion()
	}
	create("old")
	srv.Compact(srv.ResourceVersion()) // base holds "old"
	_, err = srv.RemoveCRD(gvr.GroupResource())
	require.NoError(t, err)
	srv.Compact(srv.ResourceVersion()) // the delete of "old" leaves the history
	require.NoError(t, srv.InstallCRD(crd))
	rv := create("new")
	create("newer") // the latest state is no longer rv's

	list, err := widgets.List(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	require.NoError(t, err)
	var names []string
	for _, u := range list.Items {
		names = append(names, u.GetName())
	}
	slices.Sort(names)
	require.Equal(t, []string{"new"}, names, "an exact LIST at %s (latest %s): the removed CRD's object is back", rv, strconv.FormatInt(srv.ResourceVersion(), 10))
}
