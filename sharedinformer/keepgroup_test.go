package sharedinformer_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// The mapper is reset for another group's sake (the core group: a
// ForResource discovery does not list, or a kind no resource is served
// for) while zoo's discovery answers 503: the rebuilt mapper keeps what
// it knew of zoo, and an InformerFor of octopodes in a namespace, by its
// Go type or by ForResource, passes as it does with no reset. (Found by
// a review: client-go's mapper is rebuilt whole, and lost zoo until its
// discovery answered again.)
func TestAResetForAnotherGroupKeepsWhatTheMapperKnewOfAGroupWhoseDiscoveryFails(t *testing.T) {
	resets := map[string]func(ctx context.Context, f *sharedinformer.Factory) error{
		"ForResource not listed": func(ctx context.Context, f *sharedinformer.Factory) error {
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("widgetz")))
			return err // passes: a CRD may come
		},
		"kind not served": func(ctx context.Context, f *sharedinformer.Factory) error {
			_, err := sharedinformer.InformerFor[*corev1.PodTemplate](ctx, f)
			require.ErrorContains(t, err, "serves no resource of kind PodTemplate")
			return nil
		},
	}
	for name, reset := range resets {
		var failing atomic.Bool
		_, f := zooFaultServer(t, "Octopus", &failing)
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery in full
		require.NoError(t, err)

		failing.Store(true) // zoo's discovery answers 503 from here on
		require.NoError(t, reset(t.Context(), f), name)
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
		require.NoError(t, err, "%s: the mapper knew Octopus is octopodes, namespaced; got %v", name, informerName(inf))
		named, err := sharedinformer.InformerFor[*Octopus](t.Context(), f,
			sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
		require.NoError(t, err, "%s: the mapper knew octopodes hold Octopus; got %v", name, informerName(named))
	}
}
