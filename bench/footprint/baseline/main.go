// Command baseline is a plain client-go controller's imports and nothing
// else: the typed core/v1 client, kubectl's config loading, client-go's
// informer cache and workqueue. Its module graph is what
// consumer/footprint_test.go compares the library's consumer with. It
// lives under bench/ with the other client-go peers. It is built, never
// run.
package main

import (
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

// The blank assignments keep the imports; main does nothing.
var (
	_ = corev1client.NewForConfig
	_ = clientcmd.NewDefaultClientConfigLoadingRules
	_ = cache.NewSharedIndexInformer
	_ = workqueue.NewTypedRateLimitingQueue[string]
)

func main() {}
