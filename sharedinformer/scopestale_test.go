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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// Before this change checkScope re-asked a reset mapper before it
// refused: "a ScopeError is always the server's answer now". Now the
// scope is describe's, which shares an answer for servedAnswerAge: a
// CRD re-created namespaced half a second after the factory last asked
// about it (an operator's installer swapping a CRD's scope, a test suite
// re-creating its CRDs between tests) is refused with a *ScopeError, the
// error InformerFor gives for a caller's mistake, for a namespace the
// server serves it in.
func TestAScopeErrorIsNeverAnAnswerFromBeforeTheCRDWasCreatedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		widgets := fakeapiserver.CRD{Group: "widgets.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets", ClusterScoped: true}
		require.NoError(t, srv.InstallCRD(widgets))

		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		gvr := schema.GroupVersionResource{Group: widgets.Group, Version: widgets.Version, Resource: widgets.Plural}
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr))
		require.NoError(t, err, "cluster-scoped, asked for cluster-wide")
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("default"))
		require.Error(t, err, "cluster-scoped now: rightly refused")

		time.Sleep(200 * time.Millisecond)
		_, err = srv.RemoveCRD(gvr.GroupResource())
		require.NoError(t, err)
		widgets.ClusterScoped = false
		require.NoError(t, srv.InstallCRD(widgets))
		time.Sleep(300 * time.Millisecond)

		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("default"))
		require.NoError(t, err, "the server serves widgets namespaced now; InformerFor refused by an answer from before the CRD was created again")
	})
}
