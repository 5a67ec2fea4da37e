package sharedinformer_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// The factory path, against a real API server (the local control plane
// this package's TestMain started): an informer named by its type and
// namespace, a one-line handler, the sync wait, and a key for a worker.
func ExampleFactory() {
	ctx := context.Background()
	cfg := testenv.Current().Config()
	if err := createExampleObjects(ctx, cfg, "example-factory"); err != nil {
		fmt.Println(err)
		return
	}

	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	configMaps, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace("example-factory"))
	if err != nil {
		fmt.Println(err)
		return
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	defer queue.ShutDown()
	reg, err := configMaps.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue))
	if err != nil {
		fmt.Println(err)
		return
	}

	runCtx, stop := context.WithCancel(ctx)
	factory.Start(runCtx)
	defer func() { stop(); factory.Wait() }()
	if err := factory.WaitForCacheSync(ctx, reg); err != nil {
		fmt.Println(err)
		return
	}
	key, _ := queue.Get(ctx)
	cm, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reconcile", key, "from the cache:", cm.Data["greeting"])
	queue.Done(key)
	// Output:
	// reconcile example-factory/settings from the cache: hello
}

// createExampleObjects makes namespace ns holding one ConfigMap,
// "settings", unless they exist.
func createExampleObjects(ctx context.Context, cfg *rest.Config, ns string) error {
	client, err := testenv.CoreV1Client(cfg)
	if err != nil {
		return err
	}
	for _, post := range []struct {
		resource, namespace string
		obj                 runtime.Object
	}{
		{"namespaces", "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}},
		{"configmaps", ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"greeting": "hello"}}},
	} {
		err := client.Post().NamespaceIfScoped(post.namespace, post.namespace != "").Resource(post.resource).Body(post.obj).Do(ctx).Error()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
