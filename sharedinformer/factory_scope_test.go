package sharedinformer_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharedinformer"
)

// discoveryServer is an API server that answers discovery and nothing
// else: the core group, with ConfigMaps (namespaced) and Nodes
// (cluster-scoped). It is all InformerFor asks of a server; the informers
// these tests ask for are never started.
func discoveryServer(t *testing.T) *rest.Config {
	t.Helper()
	mux := http.NewServeMux()
	serve := func(path string, body any) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		})
	}
	verbs := metav1.Verbs{"get", "list", "watch"}
	serve("/api", metav1.APIVersions{Versions: []string{"v1"}})
	serve("/apis", metav1.APIGroupList{})
	serve("/api/v1", metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: verbs},
		{Name: "nodes", Namespaced: false, Kind: "Node", Verbs: verbs},
	}})
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	return &rest.Config{Host: server.URL}
}

// app=web, app==web and app in (web) select the same objects, so they are
// one informer: one LIST, one WATCH, one cache. So are the other
// spellings of one label or field selector.
func TestEquivalentSelectorsShareOneInformer(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, discoveryServer(t))
	for _, spellings := range [][2][]string{ // labels, fields
		{{"app=web", "app==web", "app in (web)", " app in ( web ) ", "app=web,app=web"}, {""}},
		{{"app!=web", "app notin (web)"}, {""}},
		{{"tier in (web,db)", "tier in (db,web)", "tier in (db,web,web)"}, {""}},
		{{"a=1,!b", "!b,a==1", "a in (1), !b"}, {"metadata.name=x,metadata.namespace!=y", "metadata.namespace!=y,metadata.name==x"}},
	} {
		var first *sharedinformer.Informer[*corev1.ConfigMap]
		for _, labels := range spellings[0] {
			for _, fields := range spellings[1] {
				inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels(labels), sharedinformer.WithFields(fields))
				require.NoError(t, err, "labels %q, fields %q", labels, fields)
				if first == nil {
					first = inf
				}
				if inf != first {
					t.Errorf("labels %q, fields %q made informer %q: the same objects as %q, so it should be that informer", labels, fields, inf.Name(), first.Name())
				}
			}
		}
	}

	web, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels("app in (web)"))
	require.NoError(t, err)
	assert.Equal(t, "configmaps, labels app=web, protobuf", web.Name(), "named in the canonical spelling")
	webOrDB, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels("app in (web,db)"))
	require.NoError(t, err)
	assert.NotSame(t, web, webOrDB, "other objects, another informer")
}

// A selector that does not parse is an error when the informer is asked
// for, naming the selector, not a LIST that fails for ever.
func TestASelectorThatDoesNotParseIsAnErrorNamingIt(t *testing.T) {
	f := newFactory(t, discoveryServer(t))
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.WithLabels("app in (web"))
	assert.ErrorContains(t, err, `label selector "app in (web"`)
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.WithFields("metadata.name"))
	assert.ErrorContains(t, err, `field selector "metadata.name"`)
}

// Nodes have no namespace: InNamespace on them would LIST
// /api/v1/namespaces/x/nodes and get 404 for ever. It is an error when the
// informer is asked for, naming the type, the resource and its scope, for
// typed, unstructured and metadata-only informers alike.
func TestANamespaceOnAClusterScopedTypeIsAnErrorNamingItsScope(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, discoveryServer(t))
	nodes := sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("nodes"))
	for _, c := range []struct {
		goType reflect.Type
		ask    func(...sharedinformer.InformerOption) error
	}{
		{reflect.TypeFor[*corev1.Node](), func(opts ...sharedinformer.InformerOption) error {
			_, err := sharedinformer.InformerFor[*corev1.Node](ctx, f, opts...)
			return err
		}},
		{reflect.TypeFor[*corev1.Node](), func(opts ...sharedinformer.InformerOption) error {
			_, err := sharedinformer.InformerFor[*corev1.Node](ctx, f, append(opts, nodes)...)
			return err
		}},
		{reflect.TypeFor[*unstructured.Unstructured](), func(opts ...sharedinformer.InformerOption) error {
			_, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, append(opts, nodes)...)
			return err
		}},
		{reflect.TypeFor[*metav1.PartialObjectMetadata](), func(opts ...sharedinformer.InformerOption) error {
			_, err := sharedinformer.InformerFor[*metav1.PartialObjectMetadata](ctx, f, append(opts, nodes)...)
			return err
		}},
	} {
		err := c.ask(sharedinformer.InNamespace("x"))
		require.Error(t, err, "an informer of %v for Nodes in namespace x", c.goType)
		var scoped *sharedinformer.ScopeError
		require.ErrorAs(t, err, &scoped)
		assert.Equal(t, sharedinformer.ScopeError{Type: c.goType, Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Namespace: "x", Scope: meta.RESTScopeNameRoot}, *scoped)
		assert.EqualError(t, err, fmt.Sprintf(`sharedinformer: informer of %v: nodes is cluster-scoped: it has no namespaces, so InNamespace("x") cannot apply; ask without it for the whole cluster`, c.goType))

		require.NoError(t, c.ask(), "an informer of %v for the Nodes of the whole cluster", c.goType)
	}
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("x"))
	require.NoError(t, err, "ConfigMaps are namespaced")
}
