package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// hangingListServer: zoo's discovery answers 503 while failing; /apis hangs (until the
// client gives up) while hangList, and hung is signalled when it does.
func hangingListServer(t *testing.T, failing, hangList *atomic.Bool, hung chan<- struct{}, paths *[]string, mu *sync.Mutex) (*fakeapiserver.Server, *sharedinformer.Factory) {
	srv := fakeapiserver.New()
	gvPath := "/apis/" + zooGV.String()
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		if paths != nil {
			mu.Lock()
			*paths = append(*paths, r.URL.Path)
			mu.Unlock()
		}
		if failing.Load() && r.URL.Path == gvPath {
			return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		}
		if hangList.Load() && r.URL.Path == "/apis" {
			select {
			case hung <- struct{}{}:
			default:
			}
			return fakeapiserver.Fault{Hang: true}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	return srv, f
}

// holdTurn starts an InformerFor whose mapper rebuild hangs on /apis,
// holding the lookup turn until the returned release; holding reports
// whether that InformerFor is still waiting.
func holdTurn(t *testing.T, f *sharedinformer.Factory, hangList *atomic.Bool, hung <-chan struct{}) (release func(), holding func() bool) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	hangList.Store(true)
	go func() {
		defer close(done)
		_, _ = sharedinformer.InformerFor[*corev1.PodTemplate](ctx, f) // NoMatch: forget, rebuild: /apis hangs
	}()
	<-hung
	release = func() { hangList.Store(false); cancel(); <-done }
	holding = func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	return release, holding
}

// The ScopeError discovery gave (octopodes made again cluster-scoped;
// the mapper remembers them namespaced) is given while another
// InformerFor holds the lookup turn: the group is marked all the same,
// so when zoo's discovery then fails, the mapper's carried-over
// "namespaced" does not hand out the informer. (Found by review: the
// mark waited for the turn, and a caller whose ctx ended first marked
// nothing.)
func TestAScopeErrorGivenWhileTheTurnIsBusyIsNotForgotten(t *testing.T) {
	var failing, hangList atomic.Bool
	hung := make(chan struct{}, 1)
	srv, f := hangingListServer(t, &failing, &hangList, hung, nil, nil)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f) // the mapper reads: octopodes namespaced
	require.NoError(t, err)
	_, err = srv.RemoveCRD(zooGV.WithResource("octopodes").GroupResource())
	require.NoError(t, err)
	require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes", ClusterScoped: true}))

	release, _ := holdTurn(t, f, &hangList, hung)
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr, "control: discovery says cluster-scoped")
	release()

	time.Sleep(1100 * time.Millisecond)
	failing.Store(true)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.ForResource(zooGV.WithResource("octopodes")), sharedinformer.InNamespace("shop"))
	require.Error(t, err, "discovery said octopodes are cluster-scoped a second ago; got the informer %v", informerName(inf))
}

// A refusal discovery has already given (Namespaces in a namespace)
// does not wait for the lookup turn, which another InformerFor holds
// while its discovery hangs. (Found by review: it waited for the turn,
// and returned only when its own ctx ended.)
func TestARefusalDiscoveryGaveDoesNotWaitForAnotherLookupsHang(t *testing.T) {
	var failing, hangList atomic.Bool
	hung := make(chan struct{}, 1)
	_, f := hangingListServer(t, &failing, &hangList, hung, nil, nil)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)
	release, holding := holdTurn(t, f, &hangList, hung)
	defer release()
	_, err = sharedinformer.InformerFor[*corev1.Namespace](t.Context(), f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("namespaces")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr)
	require.True(t, holding(), "a ScopeError discovery gave waited for another InformerFor's hanging discovery to give up the lookup turn")
}

// On a fresh factory, a caller's mistake (Namespaces in a namespace)
// reads the whole of discovery (/apis and every group version) to build
// the mapper, only to find it agrees (found by review: it built the
// mapper; /api/v1 is enough).
func TestAMistakeOnAFreshFactoryDoesNotReadAllOfDiscovery(t *testing.T) {
	var failing, hangList atomic.Bool
	var mu sync.Mutex
	var paths []string
	_, f := hangingListServer(t, &failing, &hangList, nil, &paths, &mu)
	_, err := sharedinformer.InformerFor[*corev1.Namespace](t.Context(), f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("namespaces")), sharedinformer.InNamespace("shop"))
	var scopeErr *sharedinformer.ScopeError
	require.ErrorAs(t, err, &scopeErr)
	mu.Lock()
	got := slices.Clone(paths)
	mu.Unlock()
	require.NotContains(t, got, "/apis", "a refusal discovery gave read the group list: %v", got)
}
