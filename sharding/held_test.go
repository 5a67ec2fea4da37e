package sharding_test

import (
	"context"
	"sync"
	"time"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// reconcileEvent is a reconcile beginning or ending in a member.
type reconcileEvent struct {
	member string
	at     time.Time
}

// heldReconcile is the reconcile of members one of whose keys the test
// holds: the first reconcile of the key named name, on whichever member,
// does not end until the test calls release (or that reconcile's context
// ends). Every reconcile of that key is reported on began as it begins
// and on ended as it ends, with its member and the time; other keys are
// reconciled at once, doing nothing.
type heldReconcile struct {
	name         string
	began, ended chan reconcileEvent
	letGo        chan struct{}
	once         sync.Once
}

// holdFirstReconcileOf returns a heldReconcile of the key named name.
func holdFirstReconcileOf(name string) *heldReconcile {
	return &heldReconcile{name: name, began: make(chan reconcileEvent, 64), ended: make(chan reconcileEvent, 64), letGo: make(chan struct{})}
}

// of is the reconcile of member, to run in its controller.
func (h *heldReconcile) of(member string) workqueue.ReconcileFunc[informer.Key] {
	return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		if key.Name != h.name {
			return workqueue.Result{}, nil
		}
		h.began <- reconcileEvent{member, time.Now()}
		h.once.Do(func() {
			select {
			case <-h.letGo:
			case <-ctx.Done():
			}
		})
		h.ended <- reconcileEvent{member, time.Now()}
		return workqueue.Result{}, nil
	}
}

// release lets the held reconcile end. Call it once.
func (h *heldReconcile) release() { close(h.letGo) }
