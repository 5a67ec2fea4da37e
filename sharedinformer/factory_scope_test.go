package sharedinformer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
