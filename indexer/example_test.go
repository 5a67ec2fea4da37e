package indexer_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
)

func pod(namespace, name, app string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: namespace, Name: name, Labels: map[string]string{"app": app},
	}}
}

// Secondary indices answer "which objects have this value?" without a
// scan. Results come in no particular order, so the example sorts them.
func ExampleIndexer_ByIndex() {
	idx, err := indexer.New(indexer.Options[*corev1.Pod]{
		Indexers: map[string]indexer.IndexFunc[*corev1.Pod]{
			"app": indexer.LabelIndexFunc[*corev1.Pod]("app"),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = idx.Add(pod("default", "web-0", "web"))
	_ = idx.Add(pod("default", "web-1", "web"))
	_ = idx.Add(pod("prod", "web-0", "web"))
	_ = idx.Add(pod("prod", "db-0", "db"))

	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		slices.Sort(out)
		return out
	}
	web, _ := idx.ByIndex("app", "web")
	fmt.Println("app=web:       ", names(web))
	prod, _ := idx.ByIndex(indexer.NamespaceIndex, "prod")
	fmt.Println("namespace=prod:", names(prod))

	// An update moves the key between values; the old value disappears
	// once no object has it.
	_ = idx.Update(pod("prod", "db-0", "web"))
	apps, _ := idx.IndexValues("app")
	fmt.Println("app values:    ", apps)

	_, err = idx.ByIndex("tier", "frontend")
	fmt.Println(err)
	// Output:
	// app=web:        [default/web-0 default/web-1 prod/web-0]
	// namespace=prod: [prod/db-0 prod/web-0]
	// app values:     [web]
	// indexer: ByIndex: no index named "tier" (indices: namespace (built in), app)
}

// A trace hook shows each write and exactly which index values it changed.
func ExampleOptions_trace() {
	idx, err := indexer.New(indexer.Options[*corev1.Pod]{
		Indexers: map[string]indexer.IndexFunc[*corev1.Pod]{
			"app": indexer.LabelIndexFunc[*corev1.Pod]("app"),
		},
		Trace: func(e informer.TraceEvent) { fmt.Println(e) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = idx.Add(pod("default", "web-0", "web"))
	_ = idx.Update(pod("default", "web-0", "web")) // no index value changes
	_ = idx.Update(pod("default", "web-0", "canary"))
	_ = idx.Delete(pod("default", "web-0", ""))
	// Output:
	// indexer    stored  default/web-0  added
	// indexer    index-changed  default/web-0  app: [] → [web]
	// indexer    stored  default/web-0  updated
	// indexer    stored  default/web-0  updated
	// indexer    index-changed  default/web-0  app: [web] → [canary]
	// indexer    deleted  default/web-0
	// indexer    index-changed  default/web-0  app: [canary] → []
}

// Pitfall 2: objects from the cache are shared. The mutation detector,
// meant for tests, catches a reader that modifies one in place.
func ExampleIndexer_CheckMutations() {
	idx, err := indexer.New(indexer.Options[*corev1.Pod]{DetectMutations: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = idx.Add(pod("default", "web-0", "web"))
	_ = idx.Add(pod("default", "web-1", "web"))

	right, _ := idx.Get(informer.Key{Namespace: "default", Name: "web-0"})
	right = right.DeepCopy() // copy first, then modify the copy
	right.Labels["app"] = "canary"
	fmt.Println(idx.CheckMutations())

	wrong, _ := idx.Get(informer.Key{Namespace: "default", Name: "web-1"})
	wrong.Labels["app"] = "canary" // modifies the cache itself
	fmt.Println(idx.CheckMutations())
	// Output:
	// <nil>
	// indexer: 1 cached object(s) were modified in place (DeepCopy before changing what the cache returns): default/web-1
}
