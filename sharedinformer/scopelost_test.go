package sharedinformer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// An informer of one namespace's Widgets is running when the CRD is
// deleted and created again cluster-scoped. Its LIST of
// /namespaces/default/widgets then 404s while discovery still lists widgets,
// in the informer's version, but cluster-scoped: no namespace of them is
// served. The namespace's Widgets went with the deleted CRD, so the
// informer reports the resource not served and empties its cache, and
// waits, with no LIST or WATCH, until widgets are namespaced again; then
// it lists them. (Found by reading: the served check looked at names
// only, called the resource served, and the informer retried its 404
// for ever, its cache holding what the watch had not deleted.)
func TestAnInformerOfANamespaceReportsNotServedWhileItsCRDIsClusterScoped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScopeSwap(t, false)
		s.post("default", "w1")
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), s.f,
			sharedinformer.ForResource(s.gvr), sharedinformer.InNamespace("default"),
			sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second}))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer s.f.Wait()
		defer cancel()
		s.f.Start(ctx)
		synctest.Wait()
		require.True(t, inf.HasSynced())
		require.Equal(t, 1, inf.Indexer().Len())

		// The watch misses the deletes, as a lagging one does: it is cut,
		// and the next one is held until the CRD is cluster-scoped.
		s.holdWatches()
		s.srv.CutWatches()
		synctest.Wait()
		s.recreate()
		s.releaseWatches()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		notServed := s.errorsMatching(func(err error) bool { return errors.Is(err, reflector.ErrNotServed) })
		require.NotEmpty(t, notServed, "widgets are served cluster-scoped only, yet the informer of namespace default was told they are served: %v", s.errorsMatching(func(error) bool { return true }))
		assert.Contains(t, notServed[0].Error(), "cluster-scoped", "the report says why a listed resource is not served")
		assert.Zero(t, inf.Indexer().Len(), "the namespace's Widgets were deleted with the CRD")
		readsBefore := s.readsNow()
		time.Sleep(time.Minute)
		assert.Equal(t, readsBefore, s.readsNow(), "no LIST or WATCH while widgets are cluster-scoped")

		s.recreate() // namespaced again
		s.post("default", "w2")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"w2"}, names(inf.Indexer().List()), "widgets namespaced again are listed")
	})
}

// post creates the Widget name in namespace ns, straight on the server.
func (s *scopeSwap) post(ns, name string) {
	s.t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"%s/%s","kind":"Widget","metadata":{"name":%q,"namespace":%q}}`, s.gvr.Group, s.gvr.Version, name, ns)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", s.gvr.Group, s.gvr.Version, ns, s.gvr.Resource), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.srv.ServeHTTP(rec, req)
	require.Equal(s.t, http.StatusCreated, rec.Code, rec.Body.String())
}

// errorsMatching returns the errors OnError got that match.
func (s *scopeSwap) errorsMatching(match func(error) bool) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []error
	for _, err := range s.errs {
		if match(err) {
			out = append(out, err)
		}
	}
	return out
}

// holdWatches holds every WATCH of the Widgets from now until
// releaseWatches.
func (s *scopeSwap) holdWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchesHeld = make(chan struct{})
}

func (s *scopeSwap) releaseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.watchesHeld)
	s.watchesHeld = nil
}

// readsNow is how many LISTs and WATCHes of the Widgets were asked.
func (s *scopeSwap) readsNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}
