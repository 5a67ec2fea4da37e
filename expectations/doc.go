// Package expectations closes the gap between a controller's own writes
// and its informer's cache (pitfall 3: the cache lags your writes).
//
// # The problem
//
// A worker reconciles owner "web": the lister shows no child, so it
// creates one. The create succeeds, but the child reaches the cache only
// when the watch event arrives, some milliseconds later. If "web" is
// reconciled again in between (another event, a resync, a second worker
// after a requeue), the lister still shows no child, and the worker
// creates a duplicate.
//
// # The pattern (kube-controller-manager's ReplicaSet controller uses it)
//
//	reconcile(owner):
//		if wait := exp.ExpiresIn(owner); wait > 0 {  // our writes are in flight: wait for them,
//			return Result{RequeueAfter: wait}, nil    // but not for a lost event
//		}
//		children := lister.List(selectorFor(owner))
//		if missing := want - len(children); missing > 0 {
//			exp.ExpectCreations(owner, missing)   // before the creates, never after
//			for range missing {                   // each create sent once: MaxRetries(0)
//				if err := create(); Refused(err) { exp.CreationObserved(owner) }
//			}
//		}
//	child add handler:    exp.CreationObserved(ownerOf(child)); queue.Add(ownerOf(child))
//	child delete handler: exp.DeletionObserved(ownerOf(child)); queue.Add(ownerOf(child))
//
// Lower by hand only a create the server refused (Refused: a 4xx other
// than a timeout or AlreadyExists): a timeout, a 5xx, or a connection
// cut before the answer, may come after the server stored the object,
// and its add event lowers it then; lowered twice, the key is satisfied before that event, and the
// next reconcile makes a duplicate
// (TestACreateThatTimedOutAfterTheServerStoredItIsStillExpected). A
// create that was never stored, left so, waits out the TTL.
//
// Satisfied turns true when every expected event was observed, or after a
// TTL (default 5 minutes). The TTL alone wakes no one: the requeue after
// ExpiresIn is what brings the key back when an event was lost. Ask
// ExpiresIn alone, once: Satisfied and then ExpiresIn could hear "wait"
// and then 0, as the TTL ran out between the two calls, and requeue
// nothing.
//
// # Where it sits
//
//	worker ──ExpectCreations(owner, n)──▶ Expectations ◀──CreationObserved(owner)── informer handler
//	worker ──ExpiresIn(owner)?──▶ Expectations
//
// It keeps counts only, per key; it is safe for concurrent use.
package expectations
