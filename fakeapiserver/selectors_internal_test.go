package fakeapiserver

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// A filter reads an object's labels where they are stored; it must
// select exactly what labels.Set(obj.GetLabels()) selects, also for
// null values and for labels that are not a map of strings.
func TestAFilterSelectsWhatTheObjectsCopiedLabelsSelect(t *testing.T) {
	objects := map[string]map[string]any{
		"no metadata":           {},
		"metadata not a map":    {"metadata": "x"},
		"no labels":             {"metadata": map[string]any{"name": "a"}},
		"labels not a map":      {"metadata": map[string]any{"labels": []any{"a"}}},
		"labels of strings":     {"metadata": map[string]any{"labels": map[string]any{"a": "x", "b": ""}}},
		"a null label":          {"metadata": map[string]any{"labels": map[string]any{"a": nil, "b": "y"}}},
		"a label not a string":  {"metadata": map[string]any{"labels": map[string]any{"a": "x", "b": int64(1)}}},
		"labels typed, not any": {"metadata": map[string]any{"labels": map[string]string{"a": "x"}}},
	}
	selectors := []string{"", "a", "!a", "a=x", "a=", "a!=x", "a in (x,y)", "a notin (x)", "a,b", "a=x,b=", "c", "!c"}
	for name, obj := range objects {
		u := &unstructured.Unstructured{Object: obj}
		for _, sel := range selectors {
			f, err := newFilter("", metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				t.Fatal(err)
			}
			want := f.labels.Matches(labels.Set(u.GetLabels()))
			if got := f.matches(u); got != want {
				t.Errorf("%s, selector %q: matches %v, want %v", name, sel, got, want)
			}
		}
	}
}

// BenchmarkFilterMatches measures what every write pays per open watch
// with a label selector, as a sharded member's informer has.
func BenchmarkFilterMatches(b *testing.B) {
	f, err := newFilter("default", metav1.ListOptions{LabelSelector: "shard.listwatch.dev/web=replica-2"})
	if err != nil {
		b.Fatal(err)
	}
	u := storedConfigMap()
	b.ReportAllocs()
	for b.Loop() {
		if !f.matches(u) {
			b.Fatal("no match")
		}
	}
}
