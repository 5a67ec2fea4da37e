package sharedinformer

import (
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
)

// docs/06: "Where discovery cannot tell (a 503) the mapper's scope and
// kind stand (TestOneDiscoveryFailureDoesNotFailAnInformerForInANamespaceTheMapperKnows)".
// The mapper knows octopodes are namespaced; while zoo's discovery
// answers 503, an unrelated served check's "no" (any informer of a
// resource deleted elsewhere) marks the mapper stale, and the next
// InformerFor resets it (freshMapper) before asking it: the rebuilt
// mapper would miss zoo (client-go builds it from the partial discovery
// without an error) and refuse the namespaced request. While the group's
// discovery fails the mapper is asked as it is. (Found by a review.)
func TestAStaleMarkDoesNotDropWhatTheMapperKnewWhileItsGroupsDiscoveryFails(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	_, f, failing := zooFailingFactory(t, scheme, fakeapiserver.CRD{Kind: "Octopus", Plural: "octopodes"})
	_, err := InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full: octopodes are namespaced
	require.NoError(t, err)

	failing.Store(true)
	// Any informer's served check answering "no" marks the mapper stale.
	answer, err := f.served.For(schema.GroupVersionResource{Group: "gone.listwatch.dev", Version: "v1", Resource: "squids"}, "")(t.Context())
	require.NoError(t, err)
	require.False(t, answer.Served)

	_, err = InformerFor[*unstructured.Unstructured](t.Context(), f,
		ForResource(zooGroupVersion.WithResource("octopodes")), InNamespace("shop"))
	require.NoError(t, err, "octopodes are namespaced, the mapper knew it; an unrelated 'not served' and zoo's 503 refused it")
}

// zooGroupVersion is the group version of zooFailingFactory's CRDs.
var zooGroupVersion = schema.GroupVersion{Group: "zoo.listwatch.dev", Version: "v1"}

// zooFailingFactory serves crd in zooGroupVersion (its group and version filled in)
// on an in-memory fake, whose discovery of zoo answers 503 while failing
// is set, and returns a quiet factory with scheme over it.
func zooFailingFactory(t *testing.T, scheme *runtime.Scheme, crd fakeapiserver.CRD) (*fakeapiserver.Server, *Factory, *atomic.Bool) {
	t.Helper()
	failing := &atomic.Bool{}
	srv, f := zooAnsweringFactory(t, scheme, crd, func() int {
		if failing.Load() {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	return srv, f, failing
}

// zooAnsweringFactory is zooFailingFactory whose discovery of zoo answers
// with the status code status returns, when not 0.
func zooAnsweringFactory(t *testing.T, scheme *runtime.Scheme, crd fakeapiserver.CRD, status func() int) (*fakeapiserver.Server, *Factory) {
	t.Helper()
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if r.URL.Path == "/apis/"+zooGroupVersion.String() {
			return fakeapiserver.Fault{Status: status()}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	crd.Group, crd.Version = zooGroupVersion.Group, zooGroupVersion.Version
	require.NoError(t, srv.InstallCRD(crd))
	f, err := NewFactory(mem.Config(), FactoryOptions{Scheme: scheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	return srv, f
}
