package sharedinformer_test

// A caller's mistake (a kind or a namespace discovery refuses) costs
// no rebuild of the mapper and drops nothing a later outage needs, and a
// failed list of groups is not "not installed": edges a review proved
// (92e22cf).

import (
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// A plain ScopeError (clams are, and always were, cluster-scoped; the
// mapper agrees with discovery) given while zoo's discovery answers marks
// zoo. zoo's discovery fails a moment later: the next lookup in zoo spends
// the mark, drops what the mapper knew of zoo, and *Octopus in a
// namespace, which passes without the mistake (and did before 92e22cf) failed on it.
// The same shape as TestAClusterScopedAnswerDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup,
// with the mistake made just before the outage instead of during it.
func TestAScopeMistakeJustBeforeAnOutageKeepsWhatTheMapperKnew(t *testing.T) {
	for _, mistake := range []bool{false, true} {
		var failing atomic.Bool
		srv, f := zooFaultServer(t, "Octopus", &failing)
		require.NoError(t, srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams", ClusterScoped: true}))
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
		require.NoError(t, err)
		if mistake {
			_, err = sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
				sharedinformer.ForResource(zooGV.WithResource("clams")), sharedinformer.InNamespace("shop"))
			var scopeErr *sharedinformer.ScopeError
			require.ErrorAs(t, err, &scopeErr)
		}
		time.Sleep(1100 * time.Millisecond)
		failing.Store(true)
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, sharedinformer.InNamespace("shop"))
		require.NoError(t, err, "mistake=%v: the mapper knew Octopus, namespaced; got %v", mistake, informerName(inf))
	}
}

// The same for a KindError: *Clam over octopodes (which hold Octopus, as
// the mapper knows) refused by a discovery that answers marks zoo; then,
// during zoo's outage, the right ForResource fails.
func TestAKindMistakeJustBeforeAnOutageKeepsWhatTheMapperKnew(t *testing.T) {
	for _, mistake := range []bool{false, true} {
		var failing atomic.Bool
		_, f := zooFaultServer(t, "Octopus", &failing)
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
		require.NoError(t, err)
		octopodes := sharedinformer.ForResource(zooGV.WithResource("octopodes"))
		if mistake {
			_, err = sharedinformer.InformerFor[*Clam](t.Context(), f, octopodes)
			var kindErr *sharedinformer.KindError
			require.ErrorAs(t, err, &kindErr)
		}
		time.Sleep(1100 * time.Millisecond)
		failing.Store(true)
		inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f, octopodes)
		require.NoError(t, err, "mistake=%v: the mapper knew octopodes hold Octopus; got %v", mistake, informerName(inf))
	}
}

// Cost: every InformerFor of Namespaces in a namespace (a ScopeError the
// mapper agrees with) marks the core group, and the next core lookup
// rebuilds the mapper from a full discovery (/api, /apis and every group
// version). Passing: a ScopeError that contradicts nothing the mapper
// knew costs no rebuild.
func TestANamespacesInANamespaceMistakeDoesNotRebuildTheMapper(t *testing.T) {
	srv := fakeapiserver.New()
	var mu sync.Mutex
	var paths []string
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: zooScheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)
	for i := range 3 {
		_, err = sharedinformer.InformerFor[*corev1.Namespace](t.Context(), f, sharedinformer.InNamespace("shop"))
		var scopeErr *sharedinformer.ScopeError
		require.ErrorAs(t, err, &scopeErr)
		mu.Lock()
		paths = nil
		mu.Unlock()
		_, err = sharedinformer.InformerFor[*corev1.Secret](t.Context(), f, sharedinformer.InNamespace(strings.Repeat("x", i+1)))
		require.NoError(t, err)
		mu.Lock()
		got := slices.Clone(paths)
		mu.Unlock()
		require.NotContains(t, got, "/apis", "round %d: a Secret lookup after a Nodes-in-a-namespace mistake re-read the group list (a mapper rebuild): %v", i, got)
	}
}

// While the list of groups (/apis) answers 503 but zoo/v1's discovery
// answers, a CRD installed since (Clam) is asked by kind: the mapper,
// answering from what it knew, says NoMatch, and InformerFor says the
// server serves no Clam ("is its CRD installed?") and wraps a NoMatch,
// though discovery lists clams. Before 92e22cf it said the group list
// could not be read. Passing: no NoMatch claim while the group list fails.
func TestAGroupListOutageIsNotReportedAsAKindNotServed(t *testing.T) {
	z := newZooFaults(t)
	f := zooFactory(t, z.cfg, zooScheme)
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f)
	require.NoError(t, err)

	require.NoError(t, z.srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Clam", Plural: "clams"}))
	z.listFails.Store(true)
	_, err = sharedinformer.InformerFor[*Clam](t.Context(), f)
	require.Error(t, err)
	require.False(t, meta.IsNoMatchError(err) || strings.Contains(err.Error(), "serves no resource"),
		"the group list could not be read, and discovery of zoo/v1 lists clams; got %v", err)
}
