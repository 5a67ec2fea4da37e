package sharedinformer_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// While a group's discovery answers 503, the mapper's scopes for it
// stand, and a mistake refused by them resets nothing: after an
// InformerFor of the cluster-scoped clams in a namespace (an error
// either way), one of the namespaced octopodes in a namespace passes, as
// it does without the mistake. (Found by a review: the refusal reset
// the mapper, rebuilt from zoo's failing discovery, for every later
// caller.)
func TestAClusterScopedAnswerDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup(t *testing.T) {
	for _, askClamsFirst := range []bool{false, true} {
		var failing atomic.Bool
		srv, f := zooFaultServer(t, "Octopus", &failing)
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams", ClusterScoped: true}))
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full: octopodes namespaced, clams not
		require.NoError(t, err)

		failing.Store(true) // zoo's discovery answers 503 from here on
		if askClamsFirst {
			_, err = sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
				sharedinformer.ForResource(zooGV.WithResource("clams")), sharedinformer.InNamespace("shop"))
			require.Error(t, err) // a mistake: clams are cluster-scoped
		}
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
			sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
		require.NoError(t, err, "askClamsFirst=%v: octopodes are namespaced and the mapper knew it; got %v", askClamsFirst, informerName(inf))
	}
}

// Likewise for kinds: a ForResource the mapper refuses while zoo's
// discovery fails (a *Clam over octopodes, which hold Octopus) resets
// nothing, and the right one (*Octopus over octopodes) still passes.
func TestARefusedForResourceDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup(t *testing.T) {
	for _, mistakeFirst := range []bool{false, true} {
		var failing atomic.Bool
		_, f := zooFaultServer(t, "Octopus", &failing)
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full
		require.NoError(t, err)

		failing.Store(true) // zoo's discovery answers 503 from here on
		if mistakeFirst {
			_, err = sharedinformer.InformerFor[*Clam](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
			require.Error(t, err) // a mistake: octopodes hold Octopus
		}
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")))
		require.NoError(t, err, "mistakeFirst=%v: octopodes hold Octopus and the mapper knew it; got %v", mistakeFirst, informerName(inf))
	}
}
