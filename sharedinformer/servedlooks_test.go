package sharedinformer_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// Through the factory, with the real reflector:
// TestAMovedResourceIsNotJudgedGoneByAnotherVersionsNoAskedBeforeTheListOfGroups
// as a user sees it. Squids (objects a and b) move from v1 to v2 and
// stay there, but for two moments at v1; the informer of squids at v1
// (BackoffInitial 1.5 s, a Tuning knob) gets 404s and takes its two looks
// while the CRD is at v2. Octopodes (at v1) and clams (at v2) are
// served throughout; each of their informers gets one proxy's 404 before
// each look, and asks discovery for its own version only; the CRD serves
// v1 for a moment between those two requests. Both looks say "gone",
// and the squids' handlers hear a delete for both live squids.
func TestAMovedResourceIsNotDeletedFromTheCacheByAnotherVersionsNoAskedBeforeTheListOfGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := squids.Group
		srv := fakeapiserver.New()
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: g, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: g, Version: "v1", Kind: "Octopus", Plural: "octopodes"}))
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: g, Version: "v2", Kind: "Clam", Plural: "clams"}))
		postSquid(t, srv, "v1", "a")
		postSquid(t, srv, "v1", "b")

		var mu sync.Mutex
		var holdSquids chan struct{} // guarded by mu: the v1 squids' requests wait for it
		held := false                // guarded by mu: one has
		heldNow := func() bool { mu.Lock(); defer mu.Unlock(); return held }
		fail := map[string]bool{} // guarded by mu: the resource whose next request gets a 404
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			p := r.URL.Path
			if holdSquids != nil && strings.HasPrefix(p, "/apis/"+g+"/v1/squids") {
				held = true
				return fakeapiserver.Fault{Hang: true, Until: holdSquids}
			}
			for res, on := range fail {
				if on && strings.HasPrefix(p, "/apis/"+g+"/") && strings.HasSuffix(p, "/"+res) {
					fail[res] = false
					return fakeapiserver.Fault{Status: http.StatusNotFound} // a proxy's 404
				}
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		f := quietFactory(t, mem.Config())
		quick := sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(squids.WithVersion("v1")),
			sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 1500 * time.Millisecond}))
		require.NoError(t, err)
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(schema.GroupVersionResource{Group: g, Version: "v1", Resource: "octopodes"}), quick)
		require.NoError(t, err)
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(schema.GroupVersionResource{Group: g, Version: "v2", Resource: "clams"}), quick)
		require.NoError(t, err)
		calls := newCallLog()
		_, err = inf.AddEventHandler(calls)
		require.NoError(t, err)
		f.Start(ctx)
		synctest.Wait()
		require.True(t, inf.HasSynced())

		// proxy404s: the octopodes' informer gets a 404 and asks zoo/v1 (no
		// squids); the CRD serves v1 for a moment, while the clams' informer
		// gets a 404 and asks zoo/v2 (no squids). Each informer re-watches
		// and asks within its backoff (at most 100 ms).
		proxy404s := func() {
			mu.Lock()
			fail["octopodes"] = true
			mu.Unlock()
			srv.CutWatches()
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, srv.MoveCRD(squids, "v1"))
			mu.Lock()
			fail["clams"] = true
			mu.Unlock()
			srv.CutWatches()
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, srv.MoveCRD(squids, "v2"))
		}

		// The squids move to v2; the informer's next request waits.
		mu.Lock()
		holdSquids = make(chan struct{})
		mu.Unlock()
		require.NoError(t, srv.MoveCRD(squids, "v2"))
		for !heldNow() {
			time.Sleep(100 * time.Millisecond)
		}
		proxy404s()
		// Its 404 comes now: the first look.
		mu.Lock()
		close(holdSquids)
		mu.Unlock()
		time.Sleep(1100 * time.Millisecond)
		proxy404s()
		time.Sleep(10 * time.Second) // the second look, 1.5 s after the first, and after
		synctest.Wait()

		seen := calls.snapshot()
		for _, c := range seen {
			assert.NotContains(t, c, "delete", "the squids live at v2 throughout both looks; none was deleted: %q", seen)
		}
		cancel()
		f.Wait()
	})
}
