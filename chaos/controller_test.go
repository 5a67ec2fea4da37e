package chaos_test

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

const (
	srcPrefix  = "src-"
	copyPrefix = "copy-"
)

// mirror is a small level-triggered controller: for every ConfigMap
// "src-x" it keeps a ConfigMap "copy-x" with the same data, and deletes a
// copy whose source is gone. It reads only through the informer's lister
// and writes through client (across the fault proxy, so its writes fail
// too), and relies on the workqueue's retries for everything that fails.
type mirror struct {
	ns     string
	lister *lister.Lister[*corev1.ConfigMap]
	client *rest.RESTClient
	queue  *workqueue.Queue[string] // source names, "x" for src-x

	reconciles, failures, panics, writes atomic.Int64
}

// handler enqueues the source name of every src-x and copy-x that changes.
func (m *mirror) handler() sharedinformer.Handler[*corev1.ConfigMap] {
	enqueue := func(cm *corev1.ConfigMap) {
		if name, ok := strings.CutPrefix(cm.Name, srcPrefix); ok {
			m.queue.Add(name)
		} else if name, ok := strings.CutPrefix(cm.Name, copyPrefix); ok {
			m.queue.Add(name)
		}
	}
	return sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
	}
}

// run drives two workers until ctx ends.
func (m *mirror) run(ctx context.Context) {
	workqueue.Run(ctx, m.queue, m.reconcile, workqueue.RunOptions[string]{
		Workers: 2,
		OnError: func(_ string, err error) {
			if _, ok := err.(*workqueue.PanicError); ok {
				m.panics.Add(1)
			}
			m.failures.Add(1)
		},
	})
}

func (m *mirror) reconcile(ctx context.Context, name string) (workqueue.Result, error) {
	m.reconciles.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cms := m.lister.Namespace(m.ns)
	src, srcErr := cms.Get(srcPrefix + name)
	dst, dstErr := cms.Get(copyPrefix + name)
	if srcErr != nil && !apierrors.IsNotFound(srcErr) {
		return workqueue.Result{}, srcErr
	}
	if dstErr != nil && !apierrors.IsNotFound(dstErr) {
		return workqueue.Result{}, dstErr
	}
	srcGone, dstGone := srcErr != nil, dstErr != nil
	switch {
	case srcGone && dstGone:
		return workqueue.Result{}, nil
	case srcGone:
		m.writes.Add(1)
		err := m.client.Delete().Namespace(m.ns).Resource("configmaps").Name(dst.Name).
			Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &dst.UID}}).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return workqueue.Result{}, nil
		}
		return workqueue.Result{}, err
	case dstGone:
		m.writes.Add(1)
		// AlreadyExists means the cache lags a create of ours: retried.
		return workqueue.Result{}, m.client.Post().Namespace(m.ns).Resource("configmaps").Body(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: copyPrefix + name},
			Data:       maps.Clone(src.Data),
		}).Do(ctx).Error()
	case maps.Equal(src.Data, dst.Data):
		return workqueue.Result{}, nil
	default:
		m.writes.Add(1)
		next := dst.DeepCopy() // never modify the cache's own object
		next.Data = maps.Clone(src.Data)
		// A Conflict means the cache lags: retried.
		return workqueue.Result{}, m.client.Put().Namespace(m.ns).Resource("configmaps").Name(next.Name).Body(next).Do(ctx).Error()
	}
}

// mirrored reports whether the ConfigMaps on the server (name → data) are
// mirrored: every source has a copy with its data, and every copy a source.
func mirrored(server map[string]map[string]string) (bool, string) {
	for name, data := range server {
		if x, ok := strings.CutPrefix(name, srcPrefix); ok {
			c, ok := server[copyPrefix+x]
			if !ok {
				return false, name + " has no copy"
			}
			if !maps.Equal(c, data) {
				return false, name + "'s copy has other data"
			}
		}
		if x, ok := strings.CutPrefix(name, copyPrefix); ok {
			if _, ok := server[srcPrefix+x]; !ok {
				return false, name + " outlived its source"
			}
		}
	}
	return true, ""
}
