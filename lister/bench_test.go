package lister

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/indexer"
)

// Listing one namespace out of 100 (100 of 10,000 Pods): the cost follows
// the namespace's size, since the indexer is laid out by namespace.
func BenchmarkNamespaceList(b *testing.B) {
	var pods []*corev1.Pod
	for n := range 10_000 {
		app := []string{"web", "db"}[(n/100)%2] // half of each namespace
		pods = append(pods, pod(fmt.Sprintf("ns-%d", n%100), fmt.Sprintf("pod-%d", n), "app", app))
	}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	idx := must(indexer.New(indexer.Options[*corev1.Pod]{}))
	if err := idx.Replace(pods); err != nil {
		b.Fatal(err)
	}
	ns := must(New(idx, corev1.Resource("pods"))).Namespace("ns-42")
	for _, sel := range []struct {
		name string
		sel  labels.Selector
		want int
	}{{"everything", nil, 100}, {"app=web", web, 50}} {
		b.Run(sel.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := ns.List(sel.sel); len(got) != sel.want {
					b.Fatalf("got %d pods, want %d", len(got), sel.want)
				}
			}
		})
	}
}
