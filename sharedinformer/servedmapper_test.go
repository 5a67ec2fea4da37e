package sharedinformer_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// resetGoroutines counts the goroutines resetting a RESTMapper or
// running a served check, and returns their stacks.
func resetGoroutines() (int, string) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	var stacks []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("ResetWithContext")) || bytes.Contains(g, []byte("(*servedResources)")) {
			n++
			stacks = append(stacks, string(g))
		}
	}
	return n, strings.Join(stacks, "\n\n")
}

// A review proved it: a "no" once started a RESTMapper reset on a
// goroutine of its own, which, behind a discovery fetch the mapper had in
// flight (another caller's InformerFor, bounded by that caller's context
// only), outlived Factory.Wait and reset the mapper later. A "no" now
// only marks the mapper stale, and the next lookup resets it on its own
// caller's goroutine: once Wait returns, nothing of the factory's checks
// runs.
func TestAFactorysWaitLeavesNoGoroutineOfItsServedChecksBehind(t *testing.T) {
	srv := fakeapiserver.New()
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: squids.Group, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
	postSquid(t, srv, "v1", "a")

	var mu sync.Mutex
	hangNextAPI, hung := false, false
	release := make(chan struct{})
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		mu.Lock()
		defer mu.Unlock()
		if hangNextAPI && r.URL.Path == "/api" { // the mapper's fetch, for the Octopus' InformerFor
			hangNextAPI, hung = false, true
			return fakeapiserver.Fault{Hang: true, Until: release}
		}
		return fakeapiserver.Fault{}
	}))
	defer mem.Close()
	defer close(release)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
		sharedinformer.ForResource(squids.WithVersion("v1")),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: time.Second, BackoffMax: 2 * time.Second}))
	require.NoError(t, err)
	f.Start(ctx)
	require.Eventually(t, inf.HasSynced, time.Minute, 10*time.Millisecond)

	// Elsewhere, an InformerFor of Octopus, whose CRD is new to the
	// mapper: its fetch, on the miss, hangs (the caller's context is
	// live).
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	mu.Lock()
	hangNextAPI = true
	mu.Unlock()
	go func() {
		_, _ = sharedinformer.InformerFor[*Octopus](t.Context(), f)
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return hung }, time.Minute, 5*time.Millisecond)

	// The squids' CRD is deleted: the checks say "no" twice (the second
	// look), and the informer empties its cache.
	_, err = srv.RemoveCRD(squids)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(inf.Lister().List(nil)) == 0 }, time.Minute, 5*time.Millisecond)

	cancel()
	f.Wait()
	n, stacks := resetGoroutines()
	require.Zero(t, n, "Factory.Wait returned, and a goroutine of its served checks still runs:\n%s", stacks)
}
