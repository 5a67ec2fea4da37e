// Package deltafifo is the queue between the reflector and the shared
// informer: per object key, it collects every change (a Delta) until the
// informer pops them all at once.
//
// # Where it sits
//
//	reflector ──Add / Update / Delete / Replace(list, rv) / Resync──▶ DeltaFIFO
//	          (or BeginReplace, ReplacePart(part)…, FinishReplace(rv); Empty)
//	DeltaFIFO ──Pop(ctx, process)──▶ shared informer's loop:
//	      process(key, deltas): 1. update the indexer  2. notify handlers
//	DeltaFIFO ◀──Get / ListKeys (KnownObjects)── the indexer
//
// The reflector is the only producer and the informer's loop the only
// consumer, but any number of either is safe.
//
// # Usage
//
//	cache, err := indexer.New(indexer.Options[*corev1.Pod]{})
//	fifo, err := deltafifo.New(deltafifo.Options[*corev1.Pod]{KnownObjects: cache})
//	_ = fifo.Replace(pods, listRV)    // the reflector, after a LIST
//	_ = fifo.Update(pod)              // the reflector, for a MODIFIED event
//	err = fifo.Pop(ctx, func(key informer.Key, d deltafifo.Deltas[*corev1.Pod], initial bool) error {
//		newest := d.Newest()
//		if newest.Type == deltafifo.Deleted {
//			return cache.Delete(newest.Object)
//		}
//		return cache.Update(newest.Object)
//	})
//
// # The rules
//
//   - Per key, deltas accumulate oldest first; keys pop in the order they
//     were first queued since their last pop. A key is processed once per
//     pop however many changes it collected: a hot key cannot flood the
//     consumer, and no change is lost.
//   - Two deletes in a row collapse into one, keeping the one whose final
//     state is known; between two alike, the newer (client-go keeps the
//     older when both know it).
//   - A delete for a key that is neither queued nor in KnownObjects is
//     ignored.
//   - Replace (after every LIST) queues Replaced for each listed object,
//     then a Deleted delta with FinalStateUnknown for each key that is
//     known or queued but not listed: the deletions the watch missed.
//   - A list read in parts can be handed over in parts (BeginReplace,
//     ReplacePart, FinishReplace): each part's Replaced deltas are queued
//     at once, so the old cache and the whole new list never sit in
//     memory together; the tombstones wait for FinishReplace, and a list
//     that never finishes deletes nothing. WaitForRoom waits while
//     Options.PartQueueLimit keys are queued, so that a reader can let a
//     consumer that falls behind hold the list back.
//   - Empty, for a collection that is gone, queues a Deleted delta with
//     FinalStateUnknown for every key known or queued; it is not a list,
//     so it does not make HasSynced true.
//   - Resync queues Sync for each known key with nothing queued. It
//     replays the cache; it cannot call the API server. Resyncs are
//     numbered, and each delta carries how many had begun when it was
//     queued (Delta.Resyncs), so a consumer can tell which resyncs a
//     key's pop answers. Proved by
//     TestResyncReplaysOnlyCachedKeysWithNothingQueued and
//     TestEachDeltaCarriesTheNumberOfResyncsBegunWhenItWasQueued.
//   - HasSynced is true once every key of the first Replace was popped.
//   - Bad input (nil objects, objects without a valid key) is an error,
//     and a Replace with one bad object queues nothing. New, too, returns
//     an error, for a KnownObjects that is a nil pointer.
//
// # Locking
//
// One mutex guards everything; Pop waits on a sync.Cond tied to it, for
// a key, and so does WaitForRoom, for room in the queue. Pop
// calls the process function with the mutex held, so that a Replace never
// runs between "popped" and "applied to the cache" (see Pop). Keep process
// short, and never call the DeltaFIFO from it.
//
// # Tracing
//
// With Options.Trace set, every write, tombstone, replacement's end,
// Resync of KnownObjects, Bookmark, pop and processing emits an
// [informer.TraceEvent] with Stage [informer.StageFIFO] (see the Kind
// constants); BeginReplace, WaitForRoom and Close emit none. With no
// hook, no event is built.
package deltafifo
