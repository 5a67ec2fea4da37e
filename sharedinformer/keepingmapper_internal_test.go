package sharedinformer

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/restmapper"

	"github.com/listwatch/informer/fakeapiserver"
)

// A reset for the core group's sake, while zoo's discovery answers: a
// 503 keeps what the mapper knew of octopodes; a 404 is an answer (the
// version is gone), and the rebuilt mapper does not know them.
func TestAResetKeepsAVersionWhoseDiscoveryFailsButNotOneDiscoveryCallsGone(t *testing.T) {
	for status, kept := range map[int]bool{http.StatusServiceUnavailable: true, http.StatusNotFound: false} {
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		var answer atomic.Int32
		_, f := zooAnsweringFactory(t, scheme, fakeapiserver.CRD{Kind: "Octopus", Plural: "octopodes"}, func() int { return int(answer.Load()) })
		_, err := InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full
		require.NoError(t, err)

		answer.Store(int32(status))
		require.NoError(t, f.lookups.take(t.Context()))
		f.forget(t.Context(), "")
		_, err = f.mapper.KindForWithContext(t.Context(), zooGroupVersion.WithResource("octopodes"))
		f.lookups.give()
		if kept {
			require.NoError(t, err, "zoo's discovery answered %d", status)
		} else {
			require.True(t, meta.IsNoMatchError(err), "zoo's discovery answered %d; got %v", status, err)
		}
	}
}

// Aggregated discovery leaves a stale version out of its group's
// versions: a version carried over is put back in them, or the mapper
// built would not read its resources.
func TestACarriedOverVersionIsPutBackInItsGroupsVersions(t *testing.T) {
	v1 := metav1.GroupVersionForDiscovery{GroupVersion: zooGroupVersion.String(), Version: "v1"}
	known := []*restmapper.APIGroupResources{{
		Group:              metav1.APIGroup{Name: zooGroupVersion.Group, Versions: []metav1.GroupVersionForDiscovery{v1}, PreferredVersion: v1},
		VersionedResources: map[string][]metav1.APIResource{"v1": {{Name: "octopodes", Namespaced: true, Kind: "Octopus"}}},
	}}
	built := []*restmapper.APIGroupResources{{Group: metav1.APIGroup{Name: zooGroupVersion.Group}, VersionedResources: map[string][]metav1.APIResource{}}}

	built = carryOver(built, known, zooGroupVersion)
	mapping, err := restmapper.NewDiscoveryRESTMapperWithContext(built).RESTMappingWithContext(t.Context(), zooGroupVersion.WithKind("Octopus").GroupKind())
	require.NoError(t, err)
	require.Equal(t, zooGroupVersion.WithResource("octopodes"), mapping.Resource)
}

// A refusal retried while a build hangs (a worker's backoff, informers
// asked again) waits in pending once: what a build judges is bounded by
// the distinct refusals, not by how often they were given.
func TestARefusalRetriedDuringABuildWaitsToBeJudgedOnce(t *testing.T) {
	m := newKeepingMapper(nil, func(string) {})
	m.building = true
	octopodes := zooGroupVersion.WithResource("octopodes")
	for range 100 {
		m.judge(octopodes, listedResource{kind: "Octopus", namespaced: false})
	}
	m.judge(octopodes, listedResource{kind: "Octopus", namespaced: true})
	require.Len(t, m.pending, 2)
}
