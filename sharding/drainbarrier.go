package sharding

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
)

// inFlight is what a Reconciler is working on, in any worker: each call
// in progress, its key, and the objects that key held when the call
// began. A drain is acknowledged only when no other call may be
// reconciling its object (heldElsewhere).
//
// A member may reconcile an object under a key that is no longer the
// object's: a child under its parent's key, orphaned or given another
// parent while that reconcile runs (its ring key changes, the sharder
// drains it, and the member would acknowledge it under its new key);
// or an object under its own key, adopted meanwhile
// (TestAChildOrphanedWhileItsParentsKeyIsReconciledDoesNotReachAnotherMemberMidReconcile,
// TestAChildReparentedWhileItsOldParentsKeyIsReconciledDoesNotReachTheNewParentsMemberMidReconcile,
// TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo).
// A call that begins later reads a cache in which the object is already
// drained: only calls in progress can hold a drain back, and each ends.
type inFlight struct {
	mu    sync.Mutex
	calls map[*call]struct{} // guarded by mu
}

// call is one call of a Reconciler in progress.
type call struct {
	key   informer.Key
	holds map[types.UID]bool // guarded by inFlight.mu: the objects key held as the call began
}

// enter records a call of key, in progress until leave is called.
func (f *inFlight) enter(key informer.Key) (c *call, leave func()) {
	c = &call{key: key}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[*call]struct{}{}
	}
	f.calls[c] = struct{}{}
	return c, func() {
		f.mu.Lock()
		delete(f.calls, c)
		f.mu.Unlock()
	}
}

// hold records that c's key held obj as c began: the object at the key,
// or one whose ring key it is (a child, reconciled under its parent's
// key by a member that keys by ring key).
func (f *inFlight) hold(c *call, obj metav1.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.holds == nil {
		c.holds = map[types.UID]bool{}
	}
	c.holds[obj.GetUID()] = true
}

// heldElsewhere reports whether a call other than c may be reconciling
// obj: one of its own key, of its ring key, or of a key that held it as
// that call began.
func (f *inFlight) heldElsewhere(c *call, obj metav1.Object) bool {
	own, ring := informer.KeyFor(obj), ringKeyOf(obj)
	f.mu.Lock()
	defer f.mu.Unlock()
	for other := range f.calls {
		if other != c && (other.key == own || other.key == ring || other.holds[obj.GetUID()]) {
			return true
		}
	}
	return false
}

// ringKeyOf is RingKey(obj) as a Key.
func ringKeyOf(obj metav1.Object) informer.Key {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return informer.Key{Namespace: obj.GetNamespace(), Name: ref.Name}
	}
	return informer.KeyFor(obj)
}
