package lister_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
)

// cache returns an indexer holding a few Pods, as a synced informer would.
func cache() *indexer.Indexer[*corev1.Pod] {
	idx, err := indexer.New(indexer.Options[*corev1.Pod]{})
	if err != nil {
		panic(err) // the options above are valid
	}
	for _, p := range []struct{ namespace, name, app string }{
		{"default", "web-0", "web"}, {"default", "web-1", "web"},
		{"default", "db-0", "db"}, {"prod", "web-0", "web"},
	} {
		_ = idx.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: p.namespace, Name: p.name, Labels: map[string]string{"app": p.app},
		}})
	}
	return idx
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out) // listers return objects in no particular order
	return out
}

// List by label selector, in every namespace or in one.
func ExampleLister_List() {
	pods, err := lister.New(cache(), corev1.Resource("pods"))
	if err != nil {
		fmt.Println(err)
		return
	}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})

	fmt.Println(names(pods.List(nil))) // nil selector: everything
	fmt.Println(names(pods.List(web)))
	fmt.Println(names(pods.Namespace("default").List(web)))
	// Output:
	// [default/db-0 default/web-0 default/web-1 prod/web-0]
	// [default/web-0 default/web-1 prod/web-0]
	// [default/web-0 default/web-1]
}

// Get answers from the cache the way the API server would, NotFound
// included, so reconcile code handles a miss the usual way. To change what
// it returns, DeepCopy it first: the object is shared with the cache.
func ExampleNamespaceLister_Get() {
	pods, err := lister.New(cache(), corev1.Resource("pods"))
	if err != nil {
		fmt.Println(err)
		return
	}

	pod, err := pods.Namespace("prod").Get("web-0")
	fmt.Println(pod.Namespace, pod.Name, err)

	mine := pod.DeepCopy()
	mine.Labels["app"] = "canary" // safe: the cache still says "web"
	again, _ := pods.Namespace("prod").Get("web-0")
	fmt.Println(again.Labels["app"])

	_, err = pods.Namespace("prod").Get("db-0")
	fmt.Println(apierrors.IsNotFound(err), err)
	// Output:
	// prod web-0 <nil>
	// web
	// true pods "db-0" not found
}
