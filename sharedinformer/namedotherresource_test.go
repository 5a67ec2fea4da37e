package sharedinformer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// TestAnInformerIsMadeWhileAnotherResourcesInformerOfItsNameStops: the
// metrics registry lets one name serve two resources (its identity is
// name, group, version, resource), so a ConfigMap informer and a Secret
// informer may both be WithName("tenant"). While the released ConfigMap
// informer stops (in a slow handler), InformerFor makes the Secret one
// at once: it takes none of its metrics' identities. (Found by a fourth
// review of the factory's retirement: lockOnceStopped waited for any
// stopping informer of the name, whatever its resource.)
func TestAnInformerIsMadeWhileAnotherResourcesInformerOfItsNameStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, _ := factoryWithASlowObject(t, nil, true)

		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer func() { cancel(); f.Wait() }()
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("tenant"))
		require.NoError(t, err)
		_, inHandler, finish := slowHandler(t, cms)
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
// as above, from a handler of another running informer: the handler gets
// a new Secret informer named tenant, no error. (It got a
// *StillStoppingError, whose doc is for a scope whose own released
// informer is stopping, naming the ConfigMap informer's name with the
// Secret type.)
func TestAHandlerMakesAnInformerWhileAnotherResourcesInformerOfItsNameStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, client := factoryWithASlowObject(t, nil, true)

		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer func() { cancel(); f.Wait() }()
		cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("tenant"))
		require.NoError(t, err)
		watcher, err := sharedinformer.InformerFor[*corev1.Secret](ctx, f, sharedinformer.InNamespace("default"), sharedinformer.WithName("watcher"))
		require.NoError(t, err)
		_, inHandler, finish := slowHandler(t, cms)
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
