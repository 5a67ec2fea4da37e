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

// handledFactory is a factory on an in-memory fake, not started, with one
// ConfigMap informer and a handler on it (its Registration). Call it in a
// synctest bubble; the factory's informers stop when the test ends.
func handledFactory(t *testing.T) (context.Context, *sharedinformer.Factory, *sharedinformer.Informer[*corev1.ConfigMap], sharedinformer.Syncer) {
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	t.Cleanup(mem.Close)
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(func() { cancel(); f.Wait() })
	cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"))
	require.NoError(t, err)
	reg, err := cms.AddEventHandler(&recorder{})
	require.NoError(t, err)
	return ctx, f, cms, reg
}

// TestAFactoryWaitGivenHandlersButNoStartFailsAtOnce: with no informer
// started, Factory.WaitForCacheSync fails at once, also when it is given
// a handler's Registration (the documented use, pitfall 4), rather than
// waiting SyncTimeout for an informer that never runs. Found by an
// adversarial hunt: it waited the whole 2 minutes.
func TestAFactoryWaitGivenHandlersButNoStartFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, f, _, reg := handledFactory(t)
		start := time.Now()                 // the bubble's clock: it moves only while every goroutine waits
		err := f.WaitForCacheSync(ctx, reg) // Start never called
		waited := time.Since(start)
		require.Error(t, err)
		require.Zero(t, waited, "Start has started no informer, yet WaitForCacheSync waited %v and said: %v", waited, err)
		require.ErrorContains(t, err, "no started informer")
	})
}

// TestAFactoryWaitForTheHandlerOfAStartedThenReleasedInformerIsNoError:
// Start started the informer, its last holder released it, and the wait
// is given its handler's Registration: a released informer's handlers
// are not waited for, and "no started informer" is for a factory whose
// Start started nothing. Found by an adversarial review of the fix above,
// which counted only the informers still held.
func TestAFactoryWaitForTheHandlerOfAStartedThenReleasedInformerIsNoError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, f, cms, reg := handledFactory(t)
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx, reg))
		require.NoError(t, sharedinformer.Release(ctx, f, cms))

		start := time.Now()
		err := f.WaitForCacheSync(ctx, reg)
		require.Zero(t, time.Since(start))
		require.NoError(t, err, "Start did start the informer; its handler, released, is not waited for")
	})
}
