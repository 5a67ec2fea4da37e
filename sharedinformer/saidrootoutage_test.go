package sharedinformer_test

import (
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// Discovery says clams are cluster-scoped, asking again fails, and zoo's
// discovery keeps failing: the mapper, read afresh from that failing
// discovery, does not know clams, which is no answer either, so
// InformerFor of clams in a namespace returns the failure, never an
// informer that would LIST /namespaces/shop/clams and 404 for ever.
// (Found by a review of 0ffa1c2.)
func TestSaidClusterScopedThenOutageIsNotAPass(t *testing.T) {
	srv := fakeapiserver.New()
	gvPath := "/apis/" + zooGV.String()
	var failing atomic.Bool
	var okLeft atomic.Int32 // while failing: how many zoo group-version requests still succeed
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if failing.Load() && r.URL.Path == gvPath && okLeft.Add(-1) < 0 {
			return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams"}))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery: clams namespaced
	require.NoError(t, err)

	// clams' CRD is created again cluster-scoped; then zoo's discovery
	// answers once more (describe: "cluster-scoped") and fails from then on.
	_, err = srv.RemoveCRD(zooGV.WithResource("clams").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams", ClusterScoped: true}))
	okLeft.Store(1)
	failing.Store(true)

	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooGV.WithResource("clams")), sharedinformer.InNamespace("shop"))
	require.Error(t, err, "discovery said clams are cluster-scoped and could not be asked again; InformerFor handed out %v in namespace shop", informerName(inf))
}
