package sharedinformer_test

import (
	"context"
	"errors"
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

// The reverse of TestAScopeErrorIsTheServersAnswerNowNotTheMappersMemory
// (a review proved this one): a CRD namespaced first, deleted and created
// again cluster-scoped. The mapper learnt "namespaced"; a namespace asked
// for now must be refused
// with a *ScopeError, as InformerFor's doc promises, not accepted by what
// the mapper saw then (an informer that LISTs
// /namespaces/b/widgets of a cluster-scoped resource 404s for ever).
func TestANamespaceIsRefusedForACRDRecreatedClusterScoped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		widgets := fakeapiserver.CRD{Group: "widgets.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}
		require.NoError(t, srv.InstallCRD(widgets))

		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		gvr := schema.GroupVersionResource{Group: widgets.Group, Version: widgets.Version, Resource: widgets.Plural}
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("a"))
		require.NoError(t, err, "namespaced now")

		_, err = srv.RemoveCRD(gvr.GroupResource())
		require.NoError(t, err)
		widgets.ClusterScoped = true
		require.NoError(t, srv.InstallCRD(widgets))
		time.Sleep(time.Minute) // long past any cache a reader would call fresh

		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("b"))
		var scopeErr *sharedinformer.ScopeError
		require.True(t, errors.As(err, &scopeErr), "the server serves widgets cluster-scoped now, but InformerFor judged by what the mapper saw a minute ago: err = %v", err)
	})
}
