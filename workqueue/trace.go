package workqueue

import (
	"fmt"

	"github.com/listwatch/informer"
)

// The Kind values of the trace events a [Queue] and [Run] emit, all with
// Stage [informer.StageWorkqueue]. Each event reports one thing that
// happened to one key (KindShutDown: to the whole queue); [Metrics] is
// built from nothing else.
//
// A key's life, as its events tell it:
//
//	added ─▶ got ─▶ done                     the common case
//	added ─▶ deduplicated                    a second Add while it is queued
//	got ─▶ postponed ─▶ done ─▶ added        an Add while a worker holds it
//	delayed ─▶ added "delay over"            AddAfter
//	got ─▶ failed ─▶ requeued ─▶ delayed     Run: reconcile returned an error,
//	    ─▶ done ─▶ added "delay over"        so it is retried after a backoff
//	got ─▶ held ─▶ done ─▶ added "released"  Run: a Gate held it back (gate.go)
const (
	// KindAdded: the key entered the queue, to be handed to a worker by
	// Get. Detail says why when it was not a plain Add: "delay over" (its
	// AddAfter or AddRateLimited delay passed), "added while processing"
	// (Done re-queued a postponed key) or "released" (Run's Gate held it,
	// and its hold ended: KindHeld;
	// TestAHeldKeyIsTracedHeldThenAddedReleased).
	KindAdded = "added"
	// KindDeduplicated: an Add, or a delay coming due, found the key
	// already queued or already postponed, so nothing changed; or an
	// AddAfter found the key already waiting with an earlier or equal due
	// time. Detail says which.
	KindDeduplicated = "deduplicated"
	// KindPostponed: an Add of a key that a worker is processing. The key
	// is marked dirty and will be added (KindAdded) when that worker calls
	// Done, so no two workers ever hold it at once.
	KindPostponed = "postponed"
	// KindDelayed: AddAfter put the key in the waiting heap, or moved it
	// earlier there. Detail: "in 5s", or "in 5s, moved earlier". It is
	// traced after the queue's timer is armed, so a FakeClock stepped once
	// it is seen fires the delay (TestDelayedIsTracedOnceTheTimerIsArmed).
	// Step from another goroutine, after the hook has returned, as
	// ExampleResult does: the hook runs with the queue's lock held, and a
	// Step inside it would wait on that lock for good.
	KindDelayed = "delayed"
	// KindRequeued: AddRateLimited counted a failure of the key and got
	// its delay from the rate limiter. Detail: "retry 3 in 20ms". The
	// KindDelayed event of the AddAfter it then does follows; for no
	// delay, the event of an Add: KindAdded, or, under Run, whose worker
	// still holds the key, KindPostponed, and KindAdded at its Done
	// (TestARetryWithNoDelayUnderRunIsPostponedUntilDone).
	KindRequeued = "requeued"
	// KindGot: Get handed the key to a worker.
	KindGot = "got"
	// KindDone: the worker holding the key called Done.
	KindDone = "done"
	// KindForgotten: Forget cleared the key's retry history. Emitted only
	// when there was one (NumRequeues was above zero).
	KindForgotten = "forgotten"
	// KindDropped: an Add, AddAfter or AddRateLimited after ShutDown; the
	// key was ignored.
	KindDropped = "dropped"
	// KindShutDown: ShutDown or ShutDownWithDrain began. Key is empty;
	// Detail says which, and how many delayed keys were dropped.
	KindShutDown = "shut-down"
	// KindFailed: under Run, reconcile returned an error (Detail), and the
	// key is about to be requeued through the rate limiter.
	KindFailed = "failed"
	// KindPanicked: under Run, reconcile panicked, or the Gate's Hold
	// before it (Detail: the value). The panic was recovered and the key
	// is about to be requeued.
	KindPanicked = "panicked"
	// KindGaveUp: under Run, reconcile returned a Terminal error, failed
	// again after RunOptions.MaxRetries retries, or asked for a negative
	// RequeueAfter (Detail: the error). The key is forgotten and not
	// requeued.
	KindGaveUp = "gave-up"
)

// emit sends one event for key to the trace hook, stamped with the
// queue's clock. Callers hold q.mu, so one queue's events never overlap
// and arrive in the order the changes happened, and they check
// q.trace != nil first, so that with no hook neither the key's text
// (fmt.Sprint) nor any Detail string is ever built.
func (q *Queue[K]) emit(kind string, key K, detail string) {
	q.trace(informer.TraceEvent{
		Stage:  informer.StageWorkqueue,
		Kind:   kind,
		Key:    fmt.Sprint(key),
		Detail: detail,
		Time:   q.clock.Now(),
	})
}

// emitQueue sends an event about the whole queue (Key ""). Same rules as
// emit.
func (q *Queue[K]) emitQueue(kind, detail string) {
	q.trace(informer.TraceEvent{
		Stage:  informer.StageWorkqueue,
		Kind:   kind,
		Detail: detail,
		Time:   q.clock.Now(),
	})
}
