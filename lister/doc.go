// Package lister gives reconcile code typed, read-only views of an
// informer's cache: all objects, one namespace, a label selector, one
// object by name. client-go generates one lister per type
// (corev1listers.PodLister, in k8s.io/client-go/listers); here one generic
// [Lister] serves every type.
//
// # Where it sits
//
//	sharedinformer ──writes──▶ indexer ◀──reads── Lister ◀── your reconcile(key)
//
// A Lister reads the [indexer.Indexer] in memory and never calls the API
// server: reads are cheap and cost the server nothing, but they show the
// cache's view, which may lag your own recent writes (pitfall 3).
//
// # Usage
//
//	pods, err := lister.New(idx, corev1.Resource("pods"))
//	pod, err := pods.Namespace("default").Get("web-0")
//	if apierrors.IsNotFound(err) { // the same test as for a live GET
//		return nil // gone: nothing to reconcile
//	}
//	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
//	web := pods.Namespace("default").List(sel) // nil selector: everything
//
// # Rules
//
//   - Never modify what a Lister returns (pitfall 2). The objects are the
//     cache's own, shared with every other reader; DeepCopy first, change
//     the copy, send the copy to the API server. The indexer's mutation
//     detector (indexer.Options.DetectMutations) catches offenders in tests.
//   - A miss is apierrors.NewNotFound(resource, name), so apierrors.IsNotFound
//     works exactly as it does on an API error.
//   - Results come in no particular order; returned slices are new.
//   - Namespace(ns).List reads only that namespace's objects (every
//     Indexer is laid out by namespace), costing time proportional to
//     them, not to the whole cache.
//
// A Lister has no state and no lock of its own; its concurrency is the
// indexer's (readers share one read lock).
package lister
