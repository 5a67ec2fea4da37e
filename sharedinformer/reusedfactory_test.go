package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// reusedFactory is one factory used for two terms, as a leader that keeps
// its factory across terms would: term 1 asks for the ConfigMaps of
// "default", starts, syncs and ends (its Start ctx is cancelled and every
// informer has stopped). It returns term 2's ctx, the factory, term 1's
// informer and a function that creates a ConfigMap on the server. Call it
// in a synctest bubble.
func reusedFactory(t *testing.T) (context.Context, *sharedinformer.Factory, *sharedinformer.Informer[*corev1.ConfigMap], func(name string)) {
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	t.Cleanup(mem.Close)
	client, err := testenv.CoreV1Client(mem.Config())
	require.NoError(t, err)
	create := func(name string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(t.Context()).Error())
	}
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)

	term1, end1 := context.WithCancel(t.Context())
	first, err := sharedinformer.InformerFor[*corev1.ConfigMap](term1, f, sharedinformer.InNamespace("default"))
	require.NoError(t, err)
	f.Start(term1)
	require.NoError(t, f.WaitForCacheSync(term1))
	end1()
	f.Wait()

	term2, end2 := context.WithCancel(t.Context())
	t.Cleanup(func() { end2(); f.Wait() })
	return term2, f, first, create
}

// TestAnInformerStoppedWithStartsContextIsNotHandedOutAgain: once the
// ctx given to Start has ended, its informers have stopped for good, and
// InformerFor makes a fresh one for the next Start, as it does after a
// Release: the next term's sync wait waits for it, and its cache follows
// the server. Found by our own hunt: InformerFor handed out the stopped
// informer, Start skipped it (it had run), and WaitForCacheSync said
// synced at once, so the next term read a cache that no longer moved.
func TestAnInformerStoppedWithStartsContextIsNotHandedOutAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term2, f, first, create := reusedFactory(t)
		create("after-term-1")

		again, err := sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		require.False(t, first == again, "InformerFor handed out the informer that stopped with term 1")
		_, err = again.AddEventHandler(&recorder{})
		require.NoError(t, err)
		f.Start(term2)
		require.NoError(t, f.WaitForCacheSync(term2))
		_, err = again.Lister().Namespace("default").Get("after-term-1")
		require.NoError(t, err, "term 2's synced cache lacks what the server holds")

		// Term 1's holder may still give its hold back: it stopped, so
		// there is nothing left to do, and that is no error.
		require.NoError(t, sharedinformer.Release(term2, f, first))
	})
}

// TestAFactoryWaitOnAnInformerStoppedWithStartsContextIsAnError: an
// informer whose Start ctx has ended will never follow the server again,
// so a later sync wait never counts it; with nothing else running (nobody
// asked InformerFor for a fresh one) it fails, saying what to do, rather
// than report a frozen cache as synced.
func TestAFactoryWaitOnAnInformerStoppedWithStartsContextIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term2, f, _, _ := reusedFactory(t)
		f.Start(term2) // starts nothing: term 1's informer ran already
		err := f.WaitForCacheSync(term2)
		require.Error(t, err, "a sync wait counted an informer that stopped with term 1 as synced")
		require.ErrorContains(t, err, "ask InformerFor again")
	})
}

// TestAReusedFactoryWhoseScopeChangesWithTheTermSyncs: term 1's informer
// of one scope stopped with its Start ctx and was never released (its
// holders need not); term 2 asks for another scope (a member's selector
// names its term). The stopped one is retired, not counted, and term 2's
// wait returns once term 2's informer has synced. (Found by a review of
// the first fix, which retired only an informer of the scope asked for
// again, so every later wait failed, naming term 1's.)
func TestAReusedFactoryWhoseScopeChangesWithTheTermSyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term2, f, _, create := reusedFactory(t)
		create("after-term-1")
		again, err := sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"), sharedinformer.WithLabels("term=2"))
		require.NoError(t, err)
		f.Start(term2)
		require.NoError(t, f.WaitForCacheSync(term2), "term 2's informer runs and syncs; term 1's stopped one is not counted")
		require.True(t, again.HasSynced())
	})
}

// TestAReusedFactoryDoesNotCallAnUnstartedSuccessorSynced: a term that
// calls Start before it asks (Start, InformerFor, WaitForCacheSync) gets
// its fresh informer unstarted; the wait refuses, as a fresh factory's
// does, rather than call an empty cache synced because Start ran an
// informer in term 1. (Found by a review of the first fix.)
func TestAReusedFactoryDoesNotCallAnUnstartedSuccessorSynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term2, f, _, _ := reusedFactory(t)
		f.Start(term2) // term 2 starts its factory first, then asks
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](term2, f, sharedinformer.InNamespace("default"))
		require.NoError(t, err)
		err = f.WaitForCacheSync(term2)
		require.ErrorContains(t, err, "call Start", "the wait called a cache no request fills synced")
	})
}
