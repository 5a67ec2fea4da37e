package sharedinformer_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// A CRD's scope is immutable, so it changes only by deleting the CRD and
// creating it again. The factory's RESTMapper remembers the scope it read
// first; InformerFor must judge a namespace by what the server serves
// now. These tests run on simulated time, in a synctest bubble, against
// the fake API server.

// scopeSwap is the Widgets CRD on a fake API server, and a factory on it.
type scopeSwap struct {
	t   *testing.T
	srv *fakeapiserver.Server
	f   *sharedinformer.Factory
	crd fakeapiserver.CRD
	gvr schema.GroupVersionResource

	mu sync.Mutex
	// blipIn counts down the requests for the Widgets' group version
	// until one answers 503 (0: none will). Guarded by mu.
	blipIn int
	// errs are the errors the factory's OnError got. Guarded by mu.
	errs []error
	// reads counts the LISTs and WATCHes of the Widgets. Guarded by mu.
	reads int
	// watchesHeld, while not nil, holds every WATCH until it is closed.
	// Guarded by mu.
	watchesHeld chan struct{}
}

func newScopeSwap(t *testing.T, clusterScoped bool) *scopeSwap {
	s := &scopeSwap{t: t, srv: fakeapiserver.New(),
		crd: fakeapiserver.CRD{Group: "widgets.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets", ClusterScoped: clusterScoped}}
	s.gvr = schema.GroupVersionResource{Group: s.crd.Group, Version: s.crd.Version, Resource: s.crd.Plural}
	gvPath := "/apis/" + s.crd.Group + "/" + s.crd.Version
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(s.srv, func(r *http.Request) fakeapiserver.Fault {
		s.mu.Lock()
		defer s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, gvPath+"/") && strings.HasSuffix(r.URL.Path, "/"+s.crd.Plural) {
			s.reads++
			if s.watchesHeld != nil && r.URL.Query().Get("watch") == "true" {
				return fakeapiserver.Fault{Hang: true, Until: s.watchesHeld}
			}
		}
		if r.URL.Path == gvPath && s.blipIn > 0 {
			if s.blipIn--; s.blipIn == 0 {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
		}
		return fakeapiserver.Fault{}
	}))
	t.Cleanup(mem.Close)
	require.NoError(t, s.srv.InstallCRD(s.crd))
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	var err error
	s.f, err = sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: s.noteError})
	require.NoError(t, err)
	return s
}

// recreate deletes the CRD and creates it again with the other scope.
func (s *scopeSwap) recreate() {
	_, err := s.srv.RemoveCRD(s.gvr.GroupResource())
	require.NoError(s.t, err)
	s.crd.ClusterScoped = !s.crd.ClusterScoped
	require.NoError(s.t, s.srv.InstallCRD(s.crd))
}

// noteError is the factory's OnError.
func (s *scopeSwap) noteError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// blipAsk makes the nth request for the Widgets' group version from now
// answer 503, once.
func (s *scopeSwap) blipAsk(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blipIn = n
}

// ask is an InformerFor of the Widgets in namespace ns ("": the whole
// cluster).
func (s *scopeSwap) ask(ns string) error {
	opts := []sharedinformer.InformerOption{sharedinformer.ForResource(s.gvr)}
	if ns != "" {
		opts = append(opts, sharedinformer.InNamespace(ns))
	}
	_, err := sharedinformer.InformerFor[*unstructured.Unstructured](s.t.Context(), s.f, opts...)
	return err
}

// isScopeError reports whether err is InformerFor's *ScopeError.
func isScopeError(err error) bool {
	var scopeErr *sharedinformer.ScopeError
	return errors.As(err, &scopeErr)
}

// Cluster-scoped first, namespaced now: a namespace must not be refused
// by what the mapper saw then. (Found by an adversarial review.)
func TestAScopeErrorIsTheServersAnswerNowNotTheMappersMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScopeSwap(t, true)
		err := s.ask("default") // rightly refused; the mapper reads discovery
		require.True(t, isScopeError(err), "cluster-scoped now: %v", err)

		s.recreate()
		time.Sleep(time.Minute) // long past any cache a reader would call fresh
		require.NoError(t, s.ask("default"), "the server serves widgets namespaced now, but InformerFor judged by what the mapper saw a minute ago")
	})
}

// The reverse (a review proved it): namespaced first, cluster-scoped now.
// The mapper learnt "namespaced"; a namespace must be refused with a
// *ScopeError, as InformerFor's doc promises (an informer that LISTs
// /namespaces/b/widgets of a cluster-scoped resource 404s for ever).
func TestANamespaceIsRefusedForACRDRecreatedClusterScoped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScopeSwap(t, false)
		require.NoError(t, s.ask("a"), "namespaced now")

		s.recreate()
		time.Sleep(time.Minute)
		err := s.ask("b")
		require.True(t, isScopeError(err), "the server serves widgets cluster-scoped now, but InformerFor judged by what the mapper saw a minute ago: err = %v", err)
	})
}

// A "cluster-scoped" that refuses is asked again first: a review proved
// that an answer shared for a second, asked just before the CRD was
// created again namespaced, refused a namespace the server serves it in
// (a ScopeError reads as the caller's mistake).
func TestAScopeErrorIsNeverAnAnswerFromBeforeTheCRDWasCreatedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScopeSwap(t, true)
		require.NoError(t, s.ask(""), "cluster-scoped, asked for cluster-wide")
		require.True(t, isScopeError(s.ask("default")), "cluster-scoped now: rightly refused")

		time.Sleep(200 * time.Millisecond)
		s.recreate()
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, s.ask("default"), "the server serves widgets namespaced now; InformerFor refused by an answer from before the CRD was created again")
	})
}

// A review proved it: discovery answers "cluster-scoped", and the request
// asking again before refusing fails (one 503). The mapper's memory, from
// before the CRD was created again, said "namespaced": taken as it was,
// it accepted the namespace, and the informer LISTed
// /namespaces/b/widgets of a cluster-scoped resource, a 404 for ever.
// The mapper is reset first, and its fresh answer refuses.
func TestANamespaceIsRefusedWhenDiscoverySaidClusterScopedAndAskingAgainFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScopeSwap(t, false)
		_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), s.f) // the mapper reads discovery: widgets namespaced
		require.NoError(t, err)

		s.recreate()
		time.Sleep(time.Minute)
		s.blipAsk(2) // the first answers "cluster-scoped"; asking again fails
		err = s.ask("b")
		require.True(t, isScopeError(err), "discovery answered widgets cluster-scoped a moment ago, yet InformerFor took the mapper's minute-old memory: err = %v", err)
	})
}
