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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// TestAnInformerIsMadeWhileAnotherResourcesInformerOfItsNameStops: the
// metrics registry lets one name serve two resources (its identity is
// name, group, version, resource), so a ConfigMap informer and a Secret
// informer may both be WithName("tenant"). lockOnceStopped (release.go)
// waits for any stopping informer whose Name matches, whatever its
// resource: making the Secret informer blocks until the released
// ConfigMap informer (in a slow handler) has stopped, though it takes
// none of its metrics' identities (before 4a3e453 it was made at once).
//
// Passing: InformerFor makes the Secret informer at once.
func TestAnInformerIsMadeWhileAnotherResourcesInformerOfItsNameStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "slow"}}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(t.Context()).Error())
		reg, err := metrics.NewRegistry(metrics.NewMemory())
		require.NoError(t, err)
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer func() { cancel(); f.Wait() }()
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("tenant"))
		require.NoError(t, err)
		inHandler, finish := make(chan struct{}), make(chan struct{})
		_, err = cms.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {
			close(inHandler)
			<-finish
		}})
		require.NoError(t, err)
		f.Start(ctx)
		<-inHandler
		released := make(chan error, 1)
		go func() { released <- sharedinformer.Release(ctx, f, cms) }()
		synctest.Wait() // the ConfigMap informer is stopping, in its slow handler

		got := make(chan error, 1)
		go func() {
			_, err := sharedinformer.InformerFor[*corev1.Secret](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("tenant"))
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			close(finish)
			require.NoError(t, err)
		default:
			close(finish)
			<-got
			t.Fatal("InformerFor of a Secret informer named tenant waited for the released ConfigMap informer of that name to stop")
		}
		require.NoError(t, <-released)
	})
}

// TestAHandlerMakesAnInformerWhileAnotherResourcesInformerOfItsNameStops:
// as above, from a handler of another running informer: InformerFor of
// the Secret informer named tenant fails with a *StillStoppingError
// (whose doc says it is for a scope whose own released informer is
// stopping, and which names the ConfigMap informer's name with the
// Secret type), though nothing of its scope or its metrics' identity is
// stopping.
//
// Passing: the handler gets a new Secret informer, no error.
func TestAHandlerMakesAnInformerWhileAnotherResourcesInformerOfItsNameStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "slow"}}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(t.Context()).Error())
		reg, err := metrics.NewRegistry(metrics.NewMemory())
		require.NoError(t, err)
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer func() { cancel(); f.Wait() }()
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("tenant"))
		require.NoError(t, err)
		watcher, err := sharedinformer.InformerFor[*corev1.Secret](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("watcher"))
		require.NoError(t, err)
		inHandler, finish := make(chan struct{}), make(chan struct{})
		_, err = cms.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {
			close(inHandler)
			<-finish
		}})
		require.NoError(t, err)
		asked := make(chan error, 1)
		_, err = watcher.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.Secret]{AddFunc: func(*corev1.Secret, bool) {
			_, err := sharedinformer.InformerFor[*corev1.Secret](ctx, f, sharedinformer.InNamespace("other"), sharedinformer.WithName("tenant"))
			asked <- err
		}})
		require.NoError(t, err)
		f.Start(ctx)
		<-inHandler
		released := make(chan error, 1)
		go func() { released <- sharedinformer.Release(ctx, f, cms) }()
		synctest.Wait() // the ConfigMap informer is stopping, in its slow handler

		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"}}
		require.NoError(t, client.Post().Namespace("default").Resource("secrets").Body(s).Do(ctx).Error())
		err = <-asked
		close(finish)
		require.NoError(t, err)
		require.NoError(t, <-released)
	})
}
