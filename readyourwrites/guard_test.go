package readyourwrites_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// The restart 409. A ConfigMap was broken while the controller was down;
// at start its key is enqueued, and enqueued again while its first
// reconcile runs (a second informer's initial list, or an event, does
// that), so it is reconciled twice in a row. The first reconcile fixes
// it. The second, without the guard, reads the cache from before that
// fix (its event is still on the way) and PUTs again with the old
// resourceVersion: 409 Conflict. With the guard it waits until the fix is
// in the cache, sees nothing to do, and writes nothing. Twenty keys, one
// after the other, so that each key's second reconcile follows its first
// at once, as it does at a restart. Each way runs in a synctest bubble on
// the fake API server, so the caches' lag costs no real time.
func TestAKeyReconciledAgainRightAfterItsFixReadsTheFixNotTheOldCache(t *testing.T) {
	const keys = 20
	for _, guarded := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			_, cfg := fakeCluster(t, nil)
			const ns = "default"
			core := must(testenv.CoreV1Client(cfg))

			var mu sync.Mutex
			enqueuedAgain := map[informer.Key]bool{}
			sawFixed := map[informer.Key]bool{}
			c := startController(t, cfg, ns, guarded, 1, func(c *controller) workqueue.ReconcileFunc[informer.Key] {
				return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
					cm, err := c.informer.Lister().Namespace(key.Namespace).Get(key.Name)
					if err != nil {
						return workqueue.Result{}, err
					}
					if cm.Data["state"] == "ok" {
						mu.Lock()
						sawFixed[key] = true
						mu.Unlock()
						return workqueue.Result{}, nil
					}
					fixed := cm.DeepCopy()
					fixed.Data["state"] = "ok"
					if err := c.update(ctx, key, fixed); err != nil {
						return workqueue.Result{}, err
					}
					mu.Lock()
					defer mu.Unlock()
					if !enqueuedAgain[key] {
						enqueuedAgain[key] = true
						c.queue.Add(key) // the second initial list's add, arriving now
					}
					return workqueue.Result{}, nil
				}
			})
			for i := range keys {
				key := informer.Key{Namespace: ns, Name: fmt.Sprintf("settings-%02d", i)}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
					Data: map[string]string{"state": "broken"}}
				require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())
				require.Eventually(t, func() bool {
					mu.Lock()
					defer mu.Unlock()
					return sawFixed[key]
				}, within, pollEvery, "%s was reconciled once more after its fix and saw it", key)
			}

			t.Logf("guard %-5v: %d writes, %d conflicts (409) for %d keys", guarded, c.writes.Load(), c.conflicts.Load(), keys)
			if !guarded {
				assert.Positive(t, c.conflicts.Load(), "without the guard no reconcile read the cache from before its fix: the test no longer provokes the bug")
				return
			}
			assert.Zero(t, c.conflicts.Load(), "no reconcile acted on the cache from before its own fix")
			assert.Equal(t, int64(keys), c.writes.Load(), "one fix per key, nothing written twice")
			assert.Zero(t, c.guard.Pending(), "every record dropped once the cache caught up")
		})
	}
}

// A reconcile that updates its object and is requeued at once (a status
// it advances step by step) reads its own update each time: twenty
// steps, twenty writes, no conflict. Without the guard the next step
// often reads the step before and fails with 409.
func TestAReconcileRequeuedAtOnceReadsItsOwnUpdate(t *testing.T) {
	const steps = 20
	for _, guarded := range []bool{false, true} {
		cp := testenv.Shared(t)
		ns := cp.Namespace(t)
		core := must(testenv.CoreV1Client(cp.Config()))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter", Namespace: ns}, Data: map[string]string{"step": "0"}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())

		done := make(chan struct{})
		var once sync.Once
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
				if step >= steps {
					once.Do(func() { close(done) })
					return workqueue.Result{}, nil
				}
				next := cm.DeepCopy()
				next.Data["step"] = strconv.Itoa(step + 1)
				if err := c.update(ctx, key, next); err != nil {
					return workqueue.Result{}, err
				}
				return workqueue.Result{RequeueAfter: 1}, nil // at once: the next step
			}
		})
		select {
		case <-done:
		case <-time.After(within):
			t.Fatalf("not at step %d within %v (guard %v)", steps, within, guarded)
		}
		t.Logf("guard %-5v: %d writes, %d conflicts (409) for %d steps", guarded, c.writes.Load(), c.conflicts.Load(), steps)
		if guarded {
			assert.Zero(t, c.conflicts.Load(), "every step read the one before it")
			assert.Equal(t, int64(steps), c.writes.Load())
		}
	}
}
