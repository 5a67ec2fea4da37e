package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// postZoo creates an object of kind in zooGV's octopodes, namespace
// default, straight on srv.
func postZoo(t *testing.T, srv *fakeapiserver.Server, kind, name string) {
	t.Helper()
	body := `{"apiVersion":"zoo.listwatch.dev/v1","kind":"` + kind + `","metadata":{"name":"` + name + `","namespace":"default"}}`
	req := httptest.NewRequest(http.MethodPost, "/apis/zoo.listwatch.dev/v1/namespaces/default/octopodes", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
}

// A typed informer's served check treats a CRD created again
// cluster-scoped as gone (its objects went with it), and one created
// again holding another kind under the same plural likewise. Missed
// while the watch was down, the change shows no 404: every LIST fails to
// decode the new kind. Such a failure asks discovery too, which says the
// resource holds another kind: the informer empties its cache (the
// objects were deleted with their CRD) and says "not served". (Found by
// a review: the deleted objects stayed cached, the informer synced, for
// ever.)
func TestAnInformerWhoseCRDWasRecreatedWithAnotherKindDoesNotKeepTheDeletedObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { recreatedWithAnotherKind(t, zooScheme) })
}

// The same with a scheme that knows only the old kind, as a program's
// knows only its own: client-go's watch decoder cannot build the new
// kind's objects at all, and sends an ERROR event instead of an object
// of another type, which asks discovery the same way. (Found by a
// review of the fix above, which covered only a scheme that knew both.)
func TestAnInformerWhoseCRDWasRecreatedWithAKindItsSchemeDoesNotKnowDoesNotKeepTheDeletedObjects(t *testing.T) {
	octopusOnly := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(octopusOnly))
	octopusOnly.AddKnownTypes(zooGV, &Octopus{}, &OctopusList{})
	metav1.AddToGroupVersion(octopusOnly, zooGV)
	synctest.Test(t, func(t *testing.T) { recreatedWithAnotherKind(t, octopusOnly) })
}

// recreatedWithAnotherKind runs an informer of Octopus over octopodes,
// then, while its requests fail, deletes the CRD and creates it again
// holding Clam, and checks ten minutes on that the informer holds no
// Octopus and said why.
func recreatedWithAnotherKind(t *testing.T, scheme *runtime.Scheme) {
	var down atomic.Bool
	srv := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if down.Load() && strings.HasSuffix(r.URL.Path, "/octopodes") {
			return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	postZoo(t, srv, "Octopus", "a")
	var last atomic.Value
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(e error) { last.Store(e.Error()) }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); f.Wait() }()
	inf, err := sharedinformer.InformerFor[*Octopus](ctx, f)
	require.NoError(t, err)
	f.Start(ctx)
	synctest.Wait()
	require.True(t, inf.HasSynced())
	require.Len(t, inf.Lister().List(nil), 1)

	down.Store(true)
	srv.CutWatches()
	_, err = srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "octopodes"}))
	postZoo(t, srv, "Clam", "b")
	down.Store(false)
	time.Sleep(10 * time.Minute)
	synctest.Wait()

	names := []string{}
	for _, o := range inf.Lister().List(nil) {
		names = append(names, o.Name)
	}
	require.Empty(t, names, "octopus a was deleted with its CRD ten minutes ago; the informer (synced=%v) still holds it; last error: %v", inf.HasSynced(), last.Load())
	require.Contains(t, last.Load(), "holding kind Clam")
}
