package sharedinformer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// A leader or a shard member builds a factory for each term, with the
// process's one metrics Registry. Once a term's factory has stopped, the
// next term's informers register under the same names; and an informer
// named with WithName keeps one set of series, however many terms there
// are, where its default name (its label selector, with a member id that
// changes every term) would add a set per term.
func TestAFactoryOfANewTermRegistersTheMetricsTheStoppedOneGaveBack(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	memory := metrics.NewMemory()
	reg, err := metrics.NewRegistry(memory)
	require.NoError(t, err)
	for term := range 3 {
		f, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg})
		require.NoError(t, err)
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns),
			sharedinformer.WithLabels(fmt.Sprintf("shard.listwatch.dev/orders=member-%d", term)),
			sharedinformer.WithName("my shard's configmaps"))
		require.NoError(t, err, "term %d", term)
		ctx, cancel := context.WithCancel(t.Context())
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx))
		cancel()
		f.Wait()
	}
	series := strings.Count(memory.String(), "listwatch_informer_cached_objects")
	require.Equal(t, 1, series, "one series of cached objects for three terms:\n%s", memory.String())
}
