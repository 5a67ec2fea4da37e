package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// TestAFactoryWaitGivenHandlersButNoStartFailsAtOnce: with no informer
// started, Factory.WaitForCacheSync fails at once, also when it is given
// a handler's Registration (the documented use, pitfall 4), rather than
// waiting SyncTimeout for an informer that never runs. Found by an
// adversarial hunt: it waited the whole 2 minutes.
func TestAFactoryWaitGivenHandlersButNoStartFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		reg, err := cms.AddEventHandler(&recorder{})
		require.NoError(t, err)

		start := time.Now()                // the bubble's clock: it moves only while every goroutine waits
		err = f.WaitForCacheSync(ctx, reg) // Start never called
		waited := time.Since(start)
		require.Error(t, err)
		require.Zero(t, waited, "Start has started no informer, yet WaitForCacheSync waited %v and said: %v", waited, err)
		require.ErrorContains(t, err, "no started informer")
	})
}
