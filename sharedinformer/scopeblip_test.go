package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// listedAs's doc: "a discovery that cannot tell (any failure but a 404)
// counts as yes, so the mapper's answer stands". checkScope asks the
// same describe and makes any failure InformerFor's error, and describe
// keeps a failed answer for a second: one 503 from discovery, after the
// RESTMapper has long known ConfigMaps as namespaced, fails an
// InformerFor of ConfigMaps in a namespace. Before this change the scope
// came from the mapper, which had it, and no request was made; a
// transient failure of a request InformerFor did not need is now an
// error its caller must tell from a mistake.
func TestOneDiscoveryFailureDoesNotFailAnInformerForInANamespaceTheMapperKnows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var mu sync.Mutex
		fail := 0
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if fail > 0 && r.URL.Path == "/api/v1" {
				fail--
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
		require.NoError(t, err)
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("shop"))
		require.NoError(t, err, "the mapper reads discovery: ConfigMaps are namespaced")

		time.Sleep(time.Minute) // what discovery said then is long past sharing
		mu.Lock()
		fail = 1 // one blip of the API server's discovery of v1
		mu.Unlock()
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("billing"))
		require.NoError(t, err, "one 503 from a discovery request the mapper's answer did not need failed InformerFor")
	})
}
