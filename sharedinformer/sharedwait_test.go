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

// TestAControllersWaitIsNotRefusedForAnotherControllersInformerNotStartedYet:
// two controllers share one factory (what it is for) and nothing was
// ever retired or released. Controller A asks for its informer, calls
// Start and is about to wait; controller B, on its own goroutine, has
// just asked for another scope and has not called Start yet. Since
// 751aa46 A's Factory.WaitForCacheSync fails at once ("made after the
// last Start and never started: call Start again") for B's informer,
// though A's own informer runs and syncs. Before 751aa46 (and in
// client-go) the wait covered the started informers only. The refusal
// exists for a factory with nothing running after a term released or
// retired everything
// (TestAReusedFactoryWhoseLastTermReleasedItsInformerDoesNotCallAnUnstartedSuccessorSynced),
// not for this interleaving, which any two controllers starting on one
// factory can hit.
//
// Passing: A's wait returns nil once A's informer has synced.
func TestAControllersWaitIsNotRefusedForAnotherControllersInformerNotStartedYet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		ctx, end := context.WithCancel(t.Context())
		defer func() { end(); f.Wait() }()

		a, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("a"))
		require.NoError(t, err)
		regA, err := a.AddEventHandler(&recorder{})
		require.NoError(t, err)
		f.Start(ctx)                                                                                    // controller A
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("b")) // controller B, not started yet
		require.NoError(t, err)
		require.NoError(t, f.WaitForCacheSync(ctx, regA), "controller A's wait was refused for controller B's informer")
		require.True(t, a.HasSynced())
	})
}
