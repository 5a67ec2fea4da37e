package readyourwrites_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// The guard records any write whose answer is the object: an update, and
// also the three other writes a controller makes, each tested here
// against a real API server, each with a reconcile requeued at once
// right after its write, on a cache that lags (cacheLag):
//
//   - a server-side apply patch (a field manager, force);
//   - adding a finalizer, and removing it from an object being deleted,
//     which deletes it;
//   - an update of the status subresource.

// A reconcile that applies the next step with server-side apply and is
// requeued at once reads the step it applied. An apply carries no
// resourceVersion, so a stale read is not a 409: it applies the step it
// applied already, a write for nothing, and the test counts those.
func TestAReconcileRequeuedAtOnceReadsItsOwnApplyPatch(t *testing.T) {
	const steps = 20
	for _, guarded := range []bool{false, true} {
		cp := testenv.Shared(t)
		ns := cp.Namespace(t)
		core := must(testenv.CoreV1Client(cp.Config()))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: ns}, Data: map[string]string{"step": "0"}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())

		done := make(chan struct{})
		var once sync.Once
		var stale atomic.Int64
		written := 0 // the step last applied; one worker, so no lock
		c := startController(t, cp.Config(), ns, guarded, 1, func(c *controller) workqueue.ReconcileFunc[informer.Key] {
			return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				cm, err := c.informer.Lister().Namespace(key.Namespace).Get(key.Name)
				if err != nil {
					return workqueue.Result{}, err
				}
				step, err := strconv.Atoi(cm.Data["step"])
				if err != nil {
					return workqueue.Result{}, workqueue.Terminal(err)
				}
				if step < written {
					stale.Add(1)
				}
				if step >= steps {
					once.Do(func() { close(done) })
					return workqueue.Result{}, nil
				}
				patch, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
					"data":     map[string]string{"step": strconv.Itoa(step + 1)}})
				if err != nil {
					return workqueue.Result{}, err
				}
				req := c.client.Patch(types.ApplyPatchType).Namespace(key.Namespace).Resource("configmaps").Name(key.Name).
					Param("fieldManager", "stepper").Param("force", "true").Body(patch)
				if c.guard != nil {
					err = c.cms.Write(ctx, key, req, &corev1.ConfigMap{})
				} else {
					err = req.Do(ctx).Error()
				}
				if err != nil {
					return workqueue.Result{}, err
				}
				c.writes.Add(1)
				written = step + 1
				return workqueue.Result{RequeueAfter: 1}, nil
			}
		})
		select {
		case <-done:
		case <-time.After(within):
			t.Fatalf("not at step %d within %v (guard %v)", steps, within, guarded)
		}
		t.Logf("guard %-5v: %d applies, %d stale reads for %d steps", guarded, c.writes.Load(), stale.Load(), steps)
		if guarded {
			assert.Zero(t, stale.Load(), "every reconcile read the step it had applied")
			assert.Equal(t, int64(steps), c.writes.Load(), "one apply per step, none for nothing")
		}
	}
}

// A controller that keeps a finalizer on its objects adds it, and
// removes it once the object is being deleted, which lets the API server
// delete it. Each reconcile is requeued at once after its write, and each
// reads that write: the finalizer it added, then the object gone. Without
// the guard the first requeue may read the object without its finalizer
// and add it again (409), and the last may read it still there and
// remove the finalizer again (409 or 404).
func TestAReconcileRequeuedAtOnceReadsTheFinalizerItAddedAndTheDeleteItsRemovalCompleted(t *testing.T) {
	const finalizer = "example.com/cleanup"
	for _, guarded := range []bool{false, true} {
		cp := testenv.Shared(t)
		ns := cp.Namespace(t)
		core := must(testenv.CoreV1Client(cp.Config()))
		key := informer.Key{Namespace: ns, Name: "finalized"}

		var mu sync.Mutex
		var added, gone bool
		var failed atomic.Int64 // writes refused: 409, or 404 for an object already gone
		c := startController(t, cp.Config(), ns, guarded, 1, func(c *controller) workqueue.ReconcileFunc[informer.Key] {
			return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				cm, err := c.informer.Lister().Namespace(key.Namespace).Get(key.Name)
				if apierrors.IsNotFound(err) {
					mu.Lock()
					gone = added // deleted after its finalizer was seen: the end
					mu.Unlock()
					return workqueue.Result{}, nil
				}
				if err != nil {
					return workqueue.Result{}, err
				}
				has := slices.Contains(cm.Finalizers, finalizer)
				next := cm.DeepCopy()
				switch {
				case cm.DeletionTimestamp == nil && !has:
					next.Finalizers = append(next.Finalizers, finalizer)
				case cm.DeletionTimestamp != nil && has:
					next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == finalizer })
				default:
					mu.Lock()
					added = added || has
					mu.Unlock()
					return workqueue.Result{}, nil
				}
				if err := c.update(ctx, key, next); err != nil {
					if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
						failed.Add(1)
						t.Logf("refused: %v (finalizers %v, deleting %v, rv %s)", err, cm.Finalizers, cm.DeletionTimestamp != nil, cm.ResourceVersion)
					}
					return workqueue.Result{}, err
				}
				return workqueue.Result{RequeueAfter: 1}, nil
			}
		})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return added }, within, pollEvery, "the finalizer was added and seen")
		require.NoError(t, core.Delete().Namespace(ns).Resource("configmaps").Name(key.Name).Do(t.Context()).Error())
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return gone }, within, pollEvery, "the finalizer was removed and the object deleted")

		t.Logf("guard %-5v: %d writes, %d refused", guarded, c.writes.Load(), failed.Load())
		if guarded {
			assert.Zero(t, failed.Load(), "no reconcile acted on the cache from before its own write")
			assert.Equal(t, int64(2), c.writes.Load(), "one write to add the finalizer, one to remove it")
		}
	}
}

// A reconcile that advances its object's status through the status
// subresource, step by step, requeued at once, reads its own status
// update each time: twenty steps, twenty writes, no conflict. A Service
// stands for any object with a status subresource (no controller of the
// local control plane writes a Service's conditions).
func TestAReconcileRequeuedAtOnceReadsItsOwnStatusUpdate(t *testing.T) {
	const steps = 20
	for _, guarded := range []bool{false, true} {
		cp := testenv.Shared(t)
		ns := cp.Namespace(t)
		core := must(testenv.CoreV1Client(cp.Config()))
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "stepped", Namespace: ns},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("services").Body(svc).Do(t.Context()).Error())

		ctx, cancel := context.WithCancel(t.Context())
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		factory := must(si.NewFactory(cp.Config(), si.FactoryOptions{Scheme: scheme}))
		services := must(si.InformerFor[*corev1.Service](ctx, factory, si.InNamespace(ns),
			si.WithTransform(func(s *corev1.Service) (*corev1.Service, error) { time.Sleep(cacheLag); return s, nil })))
		client := must(factory.RESTClient(corev1.SchemeGroupVersion))
		queue := workqueue.New(workqueue.Options[informer.Key]{})
		_, err := services.AddEventHandler(si.EnqueueKey[*corev1.Service](queue))
		require.NoError(t, err)
		opts := workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}}
		var tracked *readyourwrites.Cache[*corev1.Service]
		if guarded {
			guard := must(readyourwrites.New(readyourwrites.Options{}))
			tracked = readyourwrites.Track(guard, services)
			opts.Gate = guard
		}

		done := make(chan struct{})
		var once sync.Once
		var writes, conflicts atomic.Int64
		reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			s, err := services.Lister().Namespace(key.Namespace).Get(key.Name)
			if err != nil {
				return workqueue.Result{}, err
			}
			step := 0
			if len(s.Status.Conditions) > 0 {
				step, _ = strconv.Atoi(s.Status.Conditions[0].Message)
			}
			if step >= steps {
				once.Do(func() { close(done) })
				return workqueue.Result{}, nil
			}
			next := s.DeepCopy()
			next.Status.Conditions = []metav1.Condition{{Type: "Stepped", Status: metav1.ConditionTrue, Reason: "Step",
				Message: strconv.Itoa(step + 1), LastTransitionTime: metav1.Now()}}
			req := client.Put().Namespace(key.Namespace).Resource("services").Name(key.Name).SubResource("status").Body(next)
			if tracked != nil {
				err = tracked.Write(ctx, key, req, next)
			} else {
				err = req.Do(ctx).Error()
			}
			switch {
			case apierrors.IsConflict(err):
				conflicts.Add(1)
				return workqueue.Result{}, err
			case err != nil:
				return workqueue.Result{}, err
			}
			writes.Add(1)
			return workqueue.Result{RequeueAfter: 1}, nil
		}
		factory.Start(ctx)
		require.NoError(t, factory.WaitForCacheSync(ctx))
		var wg sync.WaitGroup
		wg.Go(func() { workqueue.Run(ctx, queue, reconcile, opts) })
		select {
		case <-done:
		case <-time.After(within):
			t.Fatalf("not at step %d within %v (guard %v)", steps, within, guarded)
		}
		cancel()
		queue.ShutDown()
		wg.Wait()
		factory.Wait()

		t.Logf("guard %-5v: %d status writes, %d conflicts (409) for %d steps", guarded, writes.Load(), conflicts.Load(), steps)
		if guarded {
			assert.Zero(t, conflicts.Load(), "every step read the status written before it")
			assert.Equal(t, int64(steps), writes.Load())
		}
	}
}
