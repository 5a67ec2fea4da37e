package consumer

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/readyourwrites"
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
// data, deleted once the source is gone or unlabelled. A ConfigMap of that name that
// is not its mirror (no MirrorOfLabel naming the source) is someone
// else's: it is left alone, and the source goes unmirrored meanwhile. It returns when ctx ends, after
// its informer and workers have stopped.
func Run(ctx context.Context, cfg *rest.Config, namespace string, workers int) error {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
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
	client, err := factory.RESTClient(corev1.SchemeGroupVersion) // writes go straight to the API server
	if err != nil {
		return err
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	defer queue.ShutDown()
	// A source is its own key; a mirror stands for its source, so a mirror
	// changed or deleted by someone else is put right.
	if _, err := configMaps.AddEventHandler(sharedinformer.EnqueueMapped(queue, sourceKeys)); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx) // on every way out: stop the informer, then wait for it
	factory.Start(ctx)
	defer func() { cancel(); factory.Wait() }()
	if err := factory.WaitForCacheSync(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop before the cache synced
		}
		return err
	}
	// The guard holds a source's key until the cache shows what its last
	// reconcile wrote, so no reconcile acts on a cache from before it.
	guard, err := readyourwrites.New(readyourwrites.Options{Name: "mirror"})
	if err != nil {
		return err
	}
	m := &mirror{client: client, configMaps: configMaps.Lister(), writes: readyourwrites.Track(guard, configMaps)}
	workqueue.Run(ctx, queue, m.reconcile, workqueue.RunOptions[informer.Key]{Workers: workers, Gate: guard})
	return nil
}

// isSource says whether cm is labelled SourceLabel.
func isSource(cm *corev1.ConfigMap) bool { _, ok := cm.Labels[SourceLabel]; return ok }

// sourceKeys maps a ConfigMap to the source it concerns, if any. An
// update maps the old object too, so a source that loses its label is
// still reconciled, and its mirror deleted.
func sourceKeys(cm *corev1.ConfigMap) []informer.Key {
	if isSource(cm) {
		return []informer.Key{informer.KeyFor(cm)}
	}
	if source, ok := cm.Labels[MirrorOfLabel]; ok {
		return []informer.Key{{Namespace: cm.Namespace, Name: source}}
	}
	return nil
}

// mirror is the reconciler: it reads through the lister, writes through
// the client, and records each write under the source's key.
type mirror struct {
	client     *rest.RESTClient
	configMaps *lister.Lister[*corev1.ConfigMap]
	writes     *readyourwrites.Cache[*corev1.ConfigMap]
}

// reconcile makes key's mirror match key's source, from the cache alone.
func (m *mirror) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	cached := m.configMaps.Namespace(key.Namespace)
	mirrorName := key.Name + "-mirror"
	source, err := cached.Get(key.Name)
	if err == nil && !isSource(source) { // the cache holds every ConfigMap: only a labelled one is a source
		source, err = nil, apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	existing, mirrorErr := cached.Get(mirrorName)
	switch {
	case mirrorErr == nil && existing.Labels[MirrorOfLabel] != key.Name:
		return workqueue.Result{}, nil // a user's ConfigMap of that name, not our mirror: leave it alone
	case apierrors.IsNotFound(err) && mirrorErr == nil: // the source is gone: so goes its mirror
		uid := existing.UID // that one, not another made since under its name
		err = m.writes.Delete(ctx, key, informer.Key{Namespace: key.Namespace, Name: mirrorName},
			m.client.Delete().Namespace(key.Namespace).Resource("configmaps").Name(mirrorName).
				Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}))
	case err != nil: // neither exists, or a real failure
	case mirrorErr != nil: // no mirror yet
		created := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: mirrorName, Labels: map[string]string{MirrorOfLabel: key.Name}},
			Data:       maps.Clone(source.Data), // Write decodes the answer into created: never into the cache's map
		}
		err = m.writes.Write(ctx, key, m.client.Post().Namespace(key.Namespace).Resource("configmaps").Body(created), created)
	case !maps.Equal(existing.Data, source.Data):
		update := existing.DeepCopy()         // never modify what the lister returned
		update.Data = maps.Clone(source.Data) // nor into the source's, which the answer is decoded over
		err = m.writes.Write(ctx, key, m.client.Put().Namespace(key.Namespace).Resource("configmaps").Name(mirrorName).Body(update), update)
	}
	if apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
		return workqueue.Result{}, nil // someone else's write got there first; its event brings the key back
	}
	return workqueue.Result{}, err
}
