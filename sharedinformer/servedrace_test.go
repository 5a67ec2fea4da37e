package sharedinformer_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

var squids = schema.GroupResource{Group: "race.listwatch.dev", Resource: "squids"}

// postSquid creates a squid in namespace ns straight on the server.
func postSquid(t *testing.T, srv *fakeapiserver.Server, version, name string) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"%s/%s","kind":"Squid","metadata":{"name":%q,"namespace":"default"}}`, squids.Group, version, name)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/apis/%s/%s/namespaces/default/%s", squids.Group, version, squids.Resource), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
}

// A CRD that moves from v1 to v2 and back to v1 between two discovery
// requests of one served check (the "no" for v1, then the list of the
// group's versions) has moved, never gone: its objects live throughout.
// The group's versions then name v1 alone, the version just found not
// served; skipping it, the check finds the resource in no other version
// and calls it gone, and the informer's handlers hear a delete for every
// live object.
func TestACRDMovedBackBetweenTheNoAndTheGroupsListDeletesNoLiveObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: squids.Group, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
		postSquid(t, srv, "v1", "a")
		postSquid(t, srv, "v1", "b")

		var mu sync.Mutex
		moved, armed := false, false
		gvPath := "/apis/" + squids.Group + "/v1"
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case moved && r.URL.Path == gvPath: // the "no" for v1: the CRD is at v2
				armed = true
			case armed && r.URL.Path == "/apis": // between the two: the CRD moves back
				armed, moved = false, false
				require.NoError(t, srv.MoveCRD(squids, "v1"))
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		f := quietFactory(t, mem.Config())
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
			sharedinformer.ForResource(squids.WithVersion("v1")),
			sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}))
		require.NoError(t, err)
		calls := newCallLog()
		_, err = inf.AddEventHandler(calls)
		require.NoError(t, err)
		f.Start(ctx)
		synctest.Wait()
		require.True(t, inf.HasSynced())

		mu.Lock()
		moved = true
		require.NoError(t, srv.MoveCRD(squids, "v2")) // ends the watch: the next LIST of v1 is a 404
		mu.Unlock()
		time.Sleep(10 * time.Second)
		synctest.Wait()

		seen := calls.snapshot()
		for _, c := range seen {
			assert.NotContains(t, c, "delete", "the squids moved and moved back; none was deleted: %q", seen)
		}
		cancel()
		f.Wait()
	})
}

// "No older than the no" read as "asked at the same time or later" lets
// an answer asked before the no pass whenever the two share a time: in a
// synctest bubble, where this package's users test their controllers
// with fakeapiserver, every request of one instant does (a coarse clock
// does as much). Two informers of one factory read the squids, at v1
// (served, objects a and b) and at v2 (not served: it asks discovery at
// each backoff). In one instant the v2 informer's check lists the
// groups (squids at v1), the CRD moves to v2, and the check's ask for v1
// gets a 404. The v1 informer's watch ends; its check takes the cached
// "no" for v1 and the groups list of that same instant, which names v1
// alone, as no older than its no: gone, and every live squid is deleted.
func TestAGroupsListAskedBeforeTheNoInTheSameInstantDoesNotJudgeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: squids.Group, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
		postSquid(t, srv, "v1", "a")
		postSquid(t, srv, "v1", "b")

		var mu sync.Mutex
		armed := false
		gvPath := "/apis/" + squids.Group + "/v1"
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if armed && r.URL.Path == gvPath { // the v2 informer's check asks for v1, after the groups
				armed = false
				require.NoError(t, srv.MoveCRD(squids, "v2"))
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		f := quietFactory(t, mem.Config())
		tuning := sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(squids.WithVersion("v1")), tuning)
		require.NoError(t, err)
		_, err = sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(squids.WithVersion("v2")), tuning)
		require.NoError(t, err)
		calls := newCallLog()
		_, err = inf.AddEventHandler(calls)
		require.NoError(t, err)
		f.Start(ctx)
		time.Sleep(3 * time.Second) // the v2 informer's answers are now more than a second old
		synctest.Wait()
		require.True(t, inf.HasSynced())

		mu.Lock()
		armed = true
		mu.Unlock()
		time.Sleep(10 * time.Second)
		synctest.Wait()

		seen := calls.snapshot()
		require.Contains(t, seen, "add b (initial)")
		for _, c := range seen {
			assert.NotContains(t, c, "delete", "the squids moved to v2; none was deleted: %q", seen)
		}
		cancel()
		f.Wait()
	})
}

// A CRD moved from v1 to v2 and back while one check of v1 asks ("no"
// for v1, the groups naming v2, then "no" for v2, asked just after the
// move back) looks gone to that check. Believed at once, it would delete
// every live squid. The reflector believes "gone" only when a second
// check, a backoff later and asking discovery again, says it too; this one
// finds v1 served, and the informer relists.
func TestACRDMovedBackDuringTheCheckOfItsOtherVersionsDeletesNoLiveObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: squids.Group, Version: "v1", Kind: "Squid", Plural: squids.Resource}))
		postSquid(t, srv, "v1", "a")
		postSquid(t, srv, "v1", "b")

		var mu sync.Mutex
		moved := false
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if moved && r.URL.Path == "/apis/"+squids.Group+"/v2" { // the check asks v2, after the groups named it
				moved = false
				require.NoError(t, srv.MoveCRD(squids, "v1"))
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		f := quietFactory(t, mem.Config())
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f,
			sharedinformer.ForResource(squids.WithVersion("v1")),
			sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}))
		require.NoError(t, err)
		calls := newCallLog()
		_, err = inf.AddEventHandler(calls)
		require.NoError(t, err)
		f.Start(ctx)
		synctest.Wait()
		require.True(t, inf.HasSynced())

		mu.Lock()
		moved = true
		require.NoError(t, srv.MoveCRD(squids, "v2")) // ends the watch: the next LIST of v1 is a 404
		mu.Unlock()
		time.Sleep(10 * time.Second)
		synctest.Wait()

		mu.Lock()
		require.False(t, moved, "the CRD moved back during the check")
		mu.Unlock()
		seen := calls.snapshot()
		for _, c := range seen {
			assert.NotContains(t, c, "delete", "the squids moved and moved back; none was deleted: %q", seen)
		}
		assert.Len(t, inf.Lister().List(labels.Everything()), 2, "both squids are in the cache")
		cancel()
		f.Wait()
	})
}

// quietFactory is a factory over cfg that logs and reports nothing.
func quietFactory(t *testing.T, cfg *rest.Config) *sharedinformer.Factory {
	t.Helper()
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	return f
}
