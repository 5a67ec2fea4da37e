package sharedinformer_test

import (
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// Two goroutines start informers at once on a fresh factory (a
// controller's start-up): one builds the mapper (its /api/v1 read held),
// the other makes a KindError mistake (*Clam over octopodes, which hold
// Octopus, as discovery, the old and the new build all agree). The
// mistake is judged once the build has stored what it read: the mapper
// agrees, so zoo is not marked, and zoo's outage a second later does not
// drop what the mapper knew. (Found by review: a build under way counted
// as disagreeing, and the right informer failed.)
func TestAKindMistakeDuringAnotherCallersBuildKeepsWhatTheMapperKnew(t *testing.T) {
	for _, mistake := range []bool{false, true} {
		srv := fakeapiserver.New()
		zooPath := "/apis/" + zooGV.String()
		var failing, holdCore atomic.Bool
		release := make(chan struct{})
		held := make(chan struct{}, 1)
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			if failing.Load() && r.URL.Path == zooPath {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			if holdCore.Load() && r.URL.Path == "/api/v1" {
				select {
				case held <- struct{}{}:
				default:
				}
				return fakeapiserver.Fault{Hang: true, Until: release}
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(mem.Close)
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)

		holdCore.Store(true)
		done := make(chan error, 1)
		go func() {
			_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // builds the mapper
			done <- err
		}()
		<-held
		holdCore.Store(false)
		octopodes := sharedinformer.ForResource(zooGV.WithResource("octopodes"))
		if mistake {
			_, err = sharedinformer.InformerFor[*Clam](t.Context(), f, octopodes)
			var kindErr *sharedinformer.KindError
			require.ErrorAs(t, err, &kindErr)
		}
		close(release)
		require.NoError(t, <-done)

		time.Sleep(1100 * time.Millisecond)
		failing.Store(true)
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes)
		require.NoError(t, err, "mistake=%v: the mapper knew octopodes hold Octopus; got %v", mistake, informerName(inf))
	}
}
