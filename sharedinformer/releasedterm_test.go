package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// TestAReusedFactoryWhoseLastTermReleasedItsInformerDoesNotCallAnUnstartedSuccessorSynced
// is TestAReusedFactoryDoesNotCallAnUnstartedSuccessorSynced for a term
// that gives its informer back, as Release's doc asks, before its Start
// ctx ends: nothing is retired then, so `started` stays true from term
// 1, and term 2 (Start, then InformerFor, then WaitForCacheSync) is told
// its fresh, never started informer's cache is synced. Its lister reads
// an empty cache while the server holds objects.
//
// Passing: the wait refuses ("call Start"), as it does when term 1's
// informer was retired rather than released.
func TestAReusedFactoryWhoseLastTermReleasedItsInformerDoesNotCallAnUnstartedSuccessorSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)

		term1, end1 := context.WithCancel(t.Context())
		first, err := sharedinformer.InformerFor[*corev1.ConfigMap](term1, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		f.Start(term1)
		require.NoError(t, f.WaitForCacheSync(term1))
		require.NoError(t, sharedinformer.Release(term1, f, first)) // the term gives back what it asked for
		end1()
		f.Wait()

		term2, end2 := context.WithCancel(t.Context())
		defer func() { end2(); f.Wait() }()
		f.Start(term2) // term 2 starts its factory first, then asks
		again, err := sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		err = f.WaitForCacheSync(term2)
		require.Error(t, err, "the wait called a cache no request fills synced (HasSynced=%v)", again.HasSynced())
		require.ErrorContains(t, err, "call Start")
	})
}
