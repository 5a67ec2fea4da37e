package consumer

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/lister"
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
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	client, err := coreV1Client(cfg, scheme) // writes go straight to the API server
	if err != nil {
		return err
	}
	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})
	if err != nil {
		return err
	}
	configMaps, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace(namespace))
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
	if err := factory.WaitForCacheSync(ctx, reg); err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop before the cache synced
		}
		return err
	}
	m := &mirror{client: client, configMaps: configMaps.Lister()}
	workqueue.Run(ctx, queue, m.reconcile, workqueue.RunOptions[informer.Key]{Workers: workers})
	return nil
}

// mirror is the reconciler: it reads through the lister, writes through
// the client.
type mirror struct {
	client     *rest.RESTClient
	configMaps *lister.Lister[*corev1.ConfigMap]
}

// reconcile makes key's mirror match key's source, from the cache alone.
func (m *mirror) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	cached := m.configMaps.Namespace(key.Namespace)
	mirrorName := key.Name + "-mirror"
	source, err := cached.Get(key.Name)
	if apierrors.IsNotFound(err) {
		if _, err := cached.Get(mirrorName); apierrors.IsNotFound(err) {
			return workqueue.Result{}, nil
		}
		err := m.client.Delete().Namespace(key.Namespace).Resource("configmaps").Name(mirrorName).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return workqueue.Result{}, nil // the cache lagged our own delete
		}
		return workqueue.Result{}, err
	}
	if err != nil {
		return workqueue.Result{}, err
	}

	existing, err := cached.Get(mirrorName)
	if apierrors.IsNotFound(err) {
		err = m.client.Post().Namespace(key.Namespace).Resource("configmaps").Body(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: mirrorName, Labels: map[string]string{MirrorOfLabel: key.Name}},
			Data:       source.Data,
		}).Do(ctx).Error()
		if apierrors.IsAlreadyExists(err) {
			return workqueue.Result{}, nil // the cache lagged our own create; its event will re-enqueue the key
		}
		return workqueue.Result{}, err
	}
	if err != nil {
		return workqueue.Result{}, err
	}
	if maps.Equal(existing.Data, source.Data) {
		return workqueue.Result{}, nil
	}
	update := existing.DeepCopy() // never modify what the lister returned
	update.Data = source.Data
	err = m.client.Put().Namespace(key.Namespace).Resource("configmaps").Name(mirrorName).Body(update).Do(ctx).Error()
	if err != nil {
		return workqueue.Result{}, fmt.Errorf("updating %s/%s: %w", key.Namespace, mirrorName, err)
	}
	return workqueue.Result{}, nil
}

// coreV1Client is a REST client for the core/v1 API group: what a typed
// clientset builds underneath, as the library's examples show. (A
// consumer may as well use client-go's typed clientset for its writes.)
func coreV1Client(cfg *rest.Config, scheme *runtime.Scheme) (*rest.RESTClient, error) {
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion) // ListOptions, Status
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}
