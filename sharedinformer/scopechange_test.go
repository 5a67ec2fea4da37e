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

// A CRD deleted and created again with another scope: cluster-scoped
// first, namespaced now (scope is immutable, so that is how it changes).
// The factory's RESTMapper learnt the old scope when it first read
// discovery; a namespace must be refused only for a resource the server
// serves cluster-scoped now, not by what the mapper saw then. (Found by
// an adversarial review, on the fake API server.)
func TestAScopeErrorIsTheServersAnswerNowNotTheMappersMemory(t *testing.T) {
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
		// Asking for it in a namespace now is rightly refused; this also
		// has the mapper read discovery.
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("default"))
		var scopeErr *sharedinformer.ScopeError
		require.True(t, errors.As(err, &scopeErr), "cluster-scoped now: %v", err)

		_, err = srv.RemoveCRD(gvr.GroupResource())
		require.NoError(t, err)
		widgets.ClusterScoped = false
		require.NoError(t, srv.InstallCRD(widgets))
		time.Sleep(time.Minute) // long past any cache a reader would call fresh

		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace("default"))
		require.NoError(t, err, "the server serves widgets namespaced now, but InformerFor judged by what the mapper saw a minute ago")
	})
}
