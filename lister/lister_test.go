package lister

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"pgregory.net/rapid"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
)

func pod(namespace, name string, labelPairs ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if len(labelPairs) > 0 {
		p.Labels = map[string]string{}
		for n := 0; n+1 < len(labelPairs); n += 2 {
			p.Labels[labelPairs[n]] = labelPairs[n+1]
		}
	}
	return p
}

// keys returns "namespace/name" of each pod, sorted: listers return
// objects in no particular order.
func keys(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

// newPods returns a lister over an indexer holding pods.
func newPods(t *testing.T, pods ...*corev1.Pod) *Lister[*corev1.Pod] {
	t.Helper()
	idx := must(indexer.New(indexer.Options[*corev1.Pod]{}))
	require.NoError(t, idx.Replace(pods))
	return must(New(idx, corev1.Resource("pods")))
}

var fixture = []*corev1.Pod{
	pod("default", "web-0", "app", "web", "tier", "frontend"),
	pod("default", "web-1", "app", "web"),
	pod("default", "db-0", "app", "db"),
	pod("prod", "web-0", "app", "web", "tier", "frontend"),
	pod("prod", "cache-0"),
	pod("", "cluster-thing", "app", "web"),
}

func selector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	require.NoError(t, err)
	return sel
}

func TestListFiltersEveryNamespaceByTheSelector(t *testing.T) {
	pods := newPods(t, fixture...)
	{
		for _, tc := range []struct {
			selector labels.Selector
			want     []string
		}{
			{nil, []string{"/cluster-thing", "default/db-0", "default/web-0", "default/web-1", "prod/cache-0", "prod/web-0"}},
			{labels.Everything(), []string{"/cluster-thing", "default/db-0", "default/web-0", "default/web-1", "prod/cache-0", "prod/web-0"}},
			{labels.Nothing(), []string{}},
			{selector(t, "app=web"), []string{"/cluster-thing", "default/web-0", "default/web-1", "prod/web-0"}},
			{selector(t, "app=web,tier=frontend"), []string{"default/web-0", "prod/web-0"}},
			{selector(t, "app in (db, web),!tier"), []string{"/cluster-thing", "default/db-0", "default/web-1"}},
			{selector(t, "!app"), []string{"prod/cache-0"}},
		} {
			name := "nil"
			if tc.selector != nil {
				name = tc.selector.String()
			}
			assert.Equal(t, tc.want, keys(pods.List(tc.selector)), "selector %q", name)
		}
	}
}

func TestNamespaceListSeesOnlyThatNamespace(t *testing.T) {
	pods := newPods(t, fixture...)
	{
		for _, tc := range []struct {
			namespace string
			selector  labels.Selector
			want      []string
		}{
			{"default", nil, []string{"default/db-0", "default/web-0", "default/web-1"}},
			{"default", selector(t, "app=web"), []string{"default/web-0", "default/web-1"}},
			{"prod", selector(t, "tier=frontend"), []string{"prod/web-0"}},
			{"prod", selector(t, "app=db"), []string{}},
			{"empty-namespace", nil, []string{}},
			// "" is metav1.NamespaceAll: every namespace, as in the API.
			{metav1.NamespaceAll, selector(t, "app=web"), []string{"/cluster-thing", "default/web-0", "default/web-1", "prod/web-0"}},
		} {
			got := pods.Namespace(tc.namespace).List(tc.selector)
			assert.Equal(t, tc.want, keys(got), "namespace %q", tc.namespace)
		}
	}
}

func TestGetFindsObjectsByNameAndMissesAreNotFound(t *testing.T) {
	pods := newPods(t, fixture...)

	got, err := pods.Namespace("prod").Get("web-0")
	require.NoError(t, err)
	assert.Equal(t, "prod", got.Namespace)

	got, err = pods.Get("cluster-thing")
	require.NoError(t, err)
	assert.Equal(t, "cluster-thing", got.Name)

	for _, tc := range []struct {
		what string
		get  func() (*corev1.Pod, error)
		name string
	}{
		{"a name in no namespace", func() (*corev1.Pod, error) { return pods.Namespace("default").Get("nope") }, "nope"},
		{"a name from another namespace", func() (*corev1.Pod, error) { return pods.Namespace("prod").Get("web-1") }, "web-1"},
		{"a namespaced object asked for as cluster-scoped", func() (*corev1.Pod, error) { return pods.Get("web-0") }, "web-0"},
		{"an empty name", func() (*corev1.Pod, error) { return pods.Get("") }, ""},
	} {
		obj, err := tc.get()
		assert.Nil(t, obj, tc.what)
		assert.True(t, apierrors.IsNotFound(err), "%s: %v", tc.what, err)
		assert.EqualError(t, err, fmt.Sprintf("pods %q not found", tc.name), tc.what)
	}
}

func TestListerReturnsTheCachedObjectsThemselves(t *testing.T) {
	pods := newPods(t, fixture...)
	got, err := pods.Namespace("default").Get("web-0")
	require.NoError(t, err)
	assert.Same(t, fixture[0], got, "shared with the cache: DeepCopy before modifying")
}

// Property: for any cache content, namespace and selector, listing a
// namespace gives exactly the objects a scan of everything would keep.
func TestNamespaceListEqualsAScanOfEverything(t *testing.T) {
	podGen := rapid.Custom(func(t *rapid.T) *corev1.Pod {
		p := pod(rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "namespace"), rapid.StringMatching(`[a-e]{1,2}`).Draw(t, "name"))
		if app := rapid.SampledFrom([]string{"-", "web", "db"}).Draw(t, "app"); app != "-" {
			p.Labels = map[string]string{"app": app}
		}
		return p
	})
	rapid.Check(t, func(t *rapid.T) {
		byKey := map[string]*corev1.Pod{} // one pod per key, as a LIST has
		for _, p := range rapid.SliceOf(podGen).Draw(t, "pods") {
			byKey[p.Namespace+"/"+p.Name] = p
		}
		idx := must(indexer.New(indexer.Options[*corev1.Pod]{}))
		require.NoError(t, idx.Replace(slices.Collect(maps.Values(byKey))))

		namespace := rapid.SampledFrom([]string{"", "a", "b", "c", "d"}).Draw(t, "list namespace")
		sel := rapid.SampledFrom([]string{"", "app=web", "app!=web", "!app", "app"}).Draw(t, "selector")
		s, err := labels.Parse(sel)
		require.NoError(t, err)

		var want []*corev1.Pod
		for _, p := range byKey {
			if (namespace == "" || p.Namespace == namespace) && s.Matches(labels.Set(p.Labels)) {
				want = append(want, p)
			}
		}
		require.ElementsMatch(t, want, must(New(idx, corev1.Resource("pods"))).Namespace(namespace).List(s))
	})
}

func TestNewRejectsANilIndexer(t *testing.T) {
	_, err := New[*corev1.Pod](nil, corev1.Resource("pods"))
	assert.EqualError(t, err, "lister.New: the indexer is nil")
}

// Pitfall 2 through a lister: the mutation detector names the object a
// reader changed in place, and only that one.
func TestTheMutationDetectorCatchesAReaderThatModifiesAListedObject(t *testing.T) {
	idx := must(indexer.New(indexer.Options[*corev1.Pod]{DetectMutations: true}))
	require.NoError(t, idx.Add(pod("default", "web-0", "app", "web")))
	require.NoError(t, idx.Add(pod("default", "web-1", "app", "web")))
	pods := must(New(idx, corev1.Resource("pods")))
	require.NoError(t, idx.CheckMutations())

	for _, p := range pods.Namespace("default").List(nil) {
		if p.Name == "web-1" {
			p.Labels["app"] = "canary" // wrong: should have been p.DeepCopy()
		}
	}
	var mutation *indexer.MutationError
	require.ErrorAs(t, idx.CheckMutations(), &mutation)
	assert.Equal(t, []informer.Key{{Namespace: "default", Name: "web-1"}}, mutation.Keys)
}

// A lister is a read-only view: neither it nor its namespace view has a
// method that could change the cache.
func TestAListerHasOnlyMethodsThatRead(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[*Lister[*corev1.Pod]](), reflect.TypeFor[NamespaceLister[*corev1.Pod]]()} {
		var methods []string
		for m := range typ.Methods() {
			methods = append(methods, m.Name)
		}
		assert.Subset(t, []string{"Get", "List", "Namespace"}, methods, "%v may only read", typ)
	}
}
