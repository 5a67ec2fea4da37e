package sharedinformer_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// A *ScopeError says the caller erred, with a scope from discovery. While
// zoo's discovery answers 503, the mapper's memory of clams as
// cluster-scoped may be of a CRD since deleted and created again
// namespaced (nothing watches it: no mark), so an InformerFor of clams
// in a namespace is told discovery could not be asked, an error to
// retry, not refused. (Found by a review, once the mapper stopped being
// reset during an outage.)
func TestAScopeErrorDuringAnOutageIsNotTheMappersMemoryOfADeletedCRD(t *testing.T) {
	var failing atomic.Bool
	srv, f := zooFaultServer(t, "Octopus", &failing)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams", ClusterScoped: true}))
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full: clams cluster-scoped
	require.NoError(t, err)

	_, err = srv.RemoveCRD(zooGV.WithResource("clams").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams"})) // namespaced now
	failing.Store(true)                                                                                                              // zoo's discovery answers 503 from here on

	_, err = sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooGV.WithResource("clams")), sharedinformer.InNamespace("shop"))
	_, isScopeErr := errors.AsType[*sharedinformer.ScopeError](err)
	require.False(t, isScopeErr, "clams are namespaced on the server; refused with a *ScopeError from the mapper's memory of the deleted CRD: %v", err)
}
