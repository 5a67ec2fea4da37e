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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// InformerFor's doc: "the server serves a resource of T's kind" is checked
// before anything runs, and docs/06's table gives the error for "a kind
// the server does not serve (a CRD not installed), when the resource
// comes from the Go type". A CRD deleted since the factory's RESTMapper
// read discovery is not served either; with no informer of it running, no
// served check ever marks the mapper stale, and the mapper's memory must
// not make InformerFor hand out an informer that gets 404 for ever (a
// review proved it did).
func TestAKindWhoseCRDWasDeletedIsAnErrorFromInformerFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv, f := octopodesServer(t, "Octopus")
		inf, err := sharedinformer.InformerFor[*Octopus](ctx, f)
		require.NoError(t, err, "served now")
		require.NoError(t, sharedinformer.Release(ctx, f, inf)) // never started; no informer of octopodes is left

		_, err = srv.RemoveCRD(schema.GroupResource{Group: zooGV.Group, Resource: "octopodes"})
		require.NoError(t, err)
		time.Sleep(time.Minute) // long past any cache a reader would call fresh

		_, err = sharedinformer.InformerFor[*Octopus](ctx, f)
		require.ErrorContains(t, err, "is its CRD installed?", "the CRD was deleted a minute ago, but InformerFor judged by what the mapper saw before")
	})
}

// A review proved it: InformerFor with ForResource checks that the
// resource holds T's kind, and judged it by what the RESTMapper read
// before. A CRD deleted and created again with another kind under the
// same plural was refused by the kind the server no longer serves. A
// refusal is asked again of a reset mapper.
func TestAForResourceKindIsJudgedByTheServerNowNotTheMappersMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		octopodes := zooGV.WithResource("octopodes")
		srv, f := octopodesServer(t, "Octopuss")
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads discovery: octopodes hold Octopuss
		require.NoError(t, err)

		recreateOctopodes(t, srv, "Octopus")

		_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(octopodes))
		require.NoError(t, err, "the server has served octopodes as kind Octopus for a minute; InformerFor judged by what the mapper read before")
	})
}

// octopodesServer is a fake API server serving the custom resource
// octopodes of zooGV, holding kind, and a factory on it whose scheme
// knows Octopus. The server closes with the test.
func octopodesServer(t *testing.T, kind string) (*fakeapiserver.Server, *sharedinformer.Factory) {
	t.Helper()
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(srv)
	t.Cleanup(mem.Close)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: kind, Plural: "octopodes"}))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	return srv, f
}
