package consumer

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// Labels: a ConfigMap labelled SourceLabel is mirrored; its mirror,
// "<name>-mirror", carries MirrorOfLabel=<name>.
const (
	SourceLabel   = "mirror.example.com/source"
	MirrorOfLabel = "mirror.example.com/mirror-of"
)

// Run keeps, in namespace, a mirror of every ConfigMap labelled
// SourceLabel (any value): a ConfigMap named "<name>-mirror" with the same
// data, deleted once the source is gone. It returns when ctx ends, after
// its informer and workers have stopped.
func Run(ctx context.Context, cfg *rest.Config, namespace string, workers int) error {
	client, err := kubernetes.NewForConfig(cfg) // writes go through client-go's typed client
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	factory := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})
	configMaps, err := sharedinformer.InformerFor[*corev1.ConfigMap](factory, reflector.Source{
		Resource:  corev1.SchemeGroupVersion.WithResource("configmaps"),
		Namespace: namespace,
	})
	if err != nil {
		return err
	}

	queue := workqueue.New(workqueue.Options[informer.Key]{})
	enqueue := func(cm *corev1.ConfigMap) {
		// A source is its own key; a mirror stands for its source, so a
		// mirror changed or deleted by someone else is put right.
		if _, ok := cm.Labels[SourceLabel]; ok {
			queue.Add(informer.Key{Namespace: cm.Namespace, Name: cm.Name})
		} else if source, ok := cm.Labels[MirrorOfLabel]; ok {
			queue.Add(informer.Key{Namespace: cm.Namespace, Name: source})
		}
	}
	reg, err := configMaps.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
	}, sharedinformer.HandlerOptions{Name: "mirror"})
	if err != nil {
		return err
	}

	factory.Start(ctx)
	defer factory.Wait()
	if !sharedinformer.WaitForCacheSync(ctx, reg) {
		return nil // ctx ended first
	}
	m := &mirror{client: client, configMaps: configMaps.Lister()}
	workqueue.Run(ctx, queue, m.reconcile, workqueue.RunOptions[informer.Key]{Workers: workers})
	return nil
}

// mirror is the reconciler: it reads through the lister, writes through
// the client.
type mirror struct {
	client     kubernetes.Interface
	configMaps *lister.Lister[*corev1.ConfigMap]
}

// reconcile makes key's mirror match key's source, from the cache alone.
func (m *mirror) reconcile(ctx context.Context, key informer.Key) error {
	cached := m.configMaps.Namespace(key.Namespace)
	api := m.client.CoreV1().ConfigMaps(key.Namespace)
	mirrorName := key.Name + "-mirror"
	source, err := cached.Get(key.Name)
	if apierrors.IsNotFound(err) {
		if _, err := cached.Get(mirrorName); apierrors.IsNotFound(err) {
			return nil
		}
		err := api.Delete(ctx, mirrorName, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil // the cache lagged our own delete
		}
		return err
	}
	if err != nil {
		return err
	}

	existing, err := cached.Get(mirrorName)
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: mirrorName, Labels: map[string]string{MirrorOfLabel: key.Name}},
			Data:       source.Data,
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache lagged our own create; its event will re-enqueue the key
		}
		return err
	}
	if err != nil {
		return err
	}
	if maps.Equal(existing.Data, source.Data) {
		return nil
	}
	update := existing.DeepCopy() // never modify what the lister returned
	update.Data = source.Data
	if _, err := api.Update(ctx, update, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating %s/%s: %w", key.Namespace, mirrorName, err)
	}
	return nil
}
