package sharedinformer_test

import (
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// Discovery lists octopodes holding Clam now, and asking again, to
// confirm the refusal, fails (503): the RESTMapper's memory, from before
// the CRD was created again holding Octopus, must not be taken instead.
// It is reset first, as scopeNow resets it after a "cluster-scoped", and
// InformerFor returns the failure. (Found by a review: the informer of
// *Octopus was handed out.)
func TestAForResourceKindDiscoveryJustRefusedIsNotPassedByTheMappersMemoryWhenAskingAgainFails(t *testing.T) {
	srv := fakeapiserver.New()
	gvPath := "/apis/" + zooGV.String()
	var armed atomic.Bool
	var zooAsks atomic.Int32
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if armed.Load() && r.URL.Path == gvPath && zooAsks.Add(1) > 1 {
			return fakeapiserver.Fault{Status: http.StatusServiceUnavailable} // the fresh re-ask fails
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	octopodes := zooGV.WithResource("octopodes")
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads: octopodes hold Octopus
	require.NoError(t, err)

	_, err = srv.RemoveCRD(octopodes.GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "octopodes"}))
	armed.Store(true)

	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(octopodes))
	require.ErrorContains(t, err, "could not be asked", "discovery listed octopodes holding Clam; asking again failed; got the informer %v of *Octopus", informerName(inf))
}
