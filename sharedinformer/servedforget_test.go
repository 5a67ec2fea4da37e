package sharedinformer_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A review proved it (after e7c6dab): a served check whose own answer is a fresh
// "no" clears the factory's RESTMapper (servedResources.forget, the
// mapper's Reset) while it holds the factory's turn. client-go's
// DeferredDiscoveryRESTMapper takes its initMu for a Reset, and holds it
// for the whole discovery fetch of any lookup in flight: an InformerFor
// elsewhere in the process, with a namespace (checkScope), bounded only
// by its own context. Until that fetch ends, the check waits in Reset,
// where no context reaches it: its informer cannot stop (Start's ctx
// cancelled, Release), Factory.Wait does not return, and every other
// informer's check waits for the turn. This stands for a discovery
// request that hangs, as one to a stalled server does until its caller
// gives up (client-go's discovery timeout, 32 s a request, when the
// rest.Config sets none); here it hangs until the test lets it go, and
// the informer must stop well before the hang ends. (Real time, not a
// synctest bubble: a goroutine waiting for a sync.Mutex is not durably
// blocked, so synctest.Wait would never return.)
func TestAnInformerOfADeletedResourceStopsWhileAnotherInformerForsDiscoveryHangs(t *testing.T) {
	clams := schema.GroupResource{Group: "hang.listwatch.dev", Resource: "clams"}
	srv := fakeapiserver.New()
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: squids.Group, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: clams.Group, Version: "v1", Kind: "Clam", Plural: clams.Resource}))
	postSquid(t, srv, "v1", "a")

	// The requests are told apart by path. The squids' served checks ask
	// only gvPath and the list of groups (/api, /apis). The clams'
	// InformerFor asks clamsPath first (its scope, by discovery): that
	// answer fails, so the scope is judged by the RESTMapper, whose
	// discovery fetch is the only asker of /api/v1, and that request
	// hangs. The mapper holds its lock for the whole fetch.
	gvPath := "/apis/" + squids.Group + "/v1"
	clamsPath := "/apis/" + clams.Group + "/v1"
	var mu sync.Mutex
	var seen []string // discovery requests, in order; guarded by mu
	failClams, hangCore := false, false
	gvAtHang := -1 // gvPath requests seen when /api/v1 began to hang; guarded by mu
	release := make(chan struct{})
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/api", "/apis", gvPath, clamsPath, "/api/v1":
			seen = append(seen, r.URL.Path)
		}
		switch {
		case r.URL.Path == clamsPath && failClams:
			failClams, hangCore = false, true
			return fakeapiserver.Fault{Status: http.StatusInternalServerError}
		case r.URL.Path == "/api/v1" && hangCore:
			hangCore = false
			gvAtHang = countLocked(seen, gvPath)
			return fakeapiserver.Fault{Hang: true, Until: release}
		}
		return fakeapiserver.Fault{}
	}))
	defer mem.Close()
	releaseOnce := sync.OnceFunc(func() { close(release) })
	defer releaseOnce()
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
	count := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return countLocked(seen, path)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := quietFactory(t, mem.Config())
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
		sharedinformer.ForResource(squids.WithVersion("v1")),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: time.Second, BackoffMax: 2 * time.Second}))
	require.NoError(t, err)
	f.Start(ctx)
	require.Eventually(t, inf.HasSynced, time.Minute, 10*time.Millisecond)

	// The squids' CRD is deleted: the watch ends, the relist gets a 404,
	// and the served check asks gvPath (a "no": the mapper is marked
	// stale) and then the list of groups. Counted from here, since the
	// squids' informer may have asked before.
	gvBefore, apisBefore := count(gvPath), count("/apis")
	_, err = srv.RemoveCRD(squids)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(gvPath) > gvBefore && count("/apis") > apisBefore }, time.Minute, 5*time.Millisecond)

	// Meanwhile, elsewhere in the process, an InformerFor of clams in a
	// namespace: the stale mapper is reset and fetches discovery, and that
	// fetch hangs.
	mu.Lock()
	failClams = true
	mu.Unlock()
	asked := make(chan error, 1)
	go func() {
		_, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
			sharedinformer.ForResource(clams.WithVersion("v1")), sharedinformer.InNamespace("default"))
		asked <- err
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return gvAtHang >= 0 }, time.Minute, 5*time.Millisecond)

	// The squids' informer keeps relisting, and a later check asks
	// gvPath afresh while the fetch hangs: its "no" must not wait for the
	// mapper (a reset would wait for the fetch's lock).
	mu.Lock()
	hungAt := gvAtHang
	mu.Unlock()
	require.Eventually(t, func() bool { return count(gvPath) > hungAt }, time.Minute, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)

	// The factory is shut down: the squids' informer must stop.
	cancel()
	stopped := make(chan struct{})
	go func() {
		f.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second): // a guard: it stops in milliseconds, or waits for the hang, which lasts the test
		t.Fatalf("Start's ctx ended 30 s ago, and the informer of the deleted squids has not stopped: its served check waits in the mapper's Reset, behind another InformerFor's discovery fetch that hangs, where no context reaches it, until that fetch ends (discovery requests %v)", requests())
	}

	// The hang ends; the clams' InformerFor returns (what it returns
	// does not matter here: the factory has stopped).
	releaseOnce()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the clams' InformerFor did not return within 30 s of its discovery fetch being let go")
	}
}

// countLocked counts path among seen; the caller holds seen's lock.
func countLocked(seen []string, path string) int {
	n := 0
	for _, p := range seen {
		if p == path {
			n++
		}
	}
	return n
}
