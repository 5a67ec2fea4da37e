// Package readyourwrites makes a controller read its own writes: a key is
// not reconciled again until the informer caches show what the last
// reconciles of that key wrote.
//
// # The problem
//
// A reconcile reads the cache, never the API server, and the cache is
// always a little late (pitfall 3). Write something, get the key again
// before the watch event of that write has reached the cache, and the
// reconcile acts on the state from before its own write:
//
//   - it fixes a Secret and updates it with the resourceVersion it read,
//     which is no longer current: 409 Conflict (the common case on a
//     restart, when both initial lists enqueue the key once more);
//   - it sees no child yet and creates another one (a duplicate, when the
//     child's name comes from generateName).
//
// Package expectations counts in-flight creates and deletes per owner;
// this package is more general and, by default, needs no handler of its
// own: it compares resourceVersions, which since Kubernetes 1.35 are
// promised to be comparable within one resource (KEP-5504). (With
// Options.OpaqueResourceVersions, Track registers a handler on each
// informer, which Guard.Close removes:
// TestClosingAGuardRemovesTheHandlersItsTrackRegistered.) kube-controller-manager
// does the same since 1.36 for some of its controllers (KEP-5647).
//
// # What it assumes of resourceVersions
//
// By default the guard takes two integer resourceVersions of one resource
// as ordered across all its objects, as KEP-5504 promises of
// kube-apiserver: a cache that has applied 8 holds every write up to 8,
// of any object, but those it refused (a transform's rejection, an
// IndexFunc's error: see sharedinformer's LastSyncResourceVersion). A resourceVersion that is not an integer is compared
// only for equality, with the object's own. But an aggregated API server
// may use integers that are not ordered that way, counting per object,
// say: then another object at 4 releases a key whose write at 4 is not
// in the cache (TestByDefaultIntegerResourceVersionsAreTakenAsComparableAcrossObjects).
// For such a server set Options.OpaqueResourceVersions: a write is then
// seen only once its cache has held that object at exactly the written
// resourceVersion, or has applied a change of that object after it
// (TestWithOpaqueResourceVersionsAKeyIsHeldUntilItsCacheHoldsTheWrittenVersion).
// A written version the informer never holds, because its selector left
// the object out then (a child created before it is labelled for the
// informer's shard), holds its key for MaxHold.
//
// # The pattern
//
//	guard, err := readyourwrites.New(readyourwrites.Options{Name: "secrets"})
//	if err != nil {
//		return err
//	}
//	secrets := readyourwrites.Track(guard, secretInformer)
//	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
//		s, err := secretInformer.Lister().Namespace(key.Namespace).Get(key.Name)
//		if err != nil || string(s.Data["state"]) == "ok" {
//			return workqueue.Result{}, err
//		}
//		fixed := s.DeepCopy() // never modify the cache's copy
//		fixed.Data["state"] = []byte("ok")
//		return workqueue.Result{}, secrets.Write(ctx, key, client.Put().
//			Namespace(key.Namespace).Resource("secrets").Name(key.Name).Body(fixed), fixed)
//	}
//	workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{Workers: 4, Gate: guard})
//
// [Cache.Write] sends the request and records, under the key being
// reconciled (the owner), the object and resourceVersion the API server
// answered; [Cache.Delete] records a delete. Record every write of the
// reconcile: the owner's own (a status update) and its children's, each
// through the Cache of the informer that watches it. Any write whose
// answer is the object goes through Write: a create, an update, a status
// update (SubResource("status")), a server-side apply (a Patch of
// types.ApplyPatchType with a fieldManager), a finalizer added or
// removed. An answer that says the write deleted the object (the last
// finalizer removed from an object being deleted) is recorded as a
// delete, since the cache may already hold the state it describes.
//
// # Where it sits
//
//	reconcile(owner) ──Write──▶ API server ──answer: obj@rv──▶ Guard.pending[owner]
//	API server ──watch──▶ informer ──applies obj@rv──▶ Progress closed
//	workqueue.Run ──Get(owner)──▶ Guard.Hold(owner)? ──held──▶ added again on Progress
//
// # Invariants
//
//   - A key with a recorded write is reconciled again only once the
//     written object's cache holds that object at the write's
//     resourceVersion or later (or, for a delete, no longer holds it,
//     once it has applied the writes of that object recorded before
//     the delete, where their versions are integers or, with
//     OpaqueResourceVersions, once they have arrived), or
//     its informer has applied a resourceVersion at least as new (with
//     OpaqueResourceVersions: once the cache has held that object at
//     exactly the write's resourceVersion, or applied a change of it
//     after that); or once Options.MaxHold has passed, which counts a
//     stale reconcile (listwatch_guard_stale_reconciles_total, a
//     KindStale event). Proved, clause by clause, by
//     TestAKeyReconciledAgainRightAfterItsFixReadsTheFixNotTheOldCache,
//     TestADeleteIsSeenWhenTheCacheNoLongerHoldsThatObject,
//     TestByDefaultIntegerResourceVersionsAreTakenAsComparableAcrossObjects,
//     TestWithOpaqueResourceVersionsAKeyIsHeldUntilItsCacheHoldsTheWrittenVersion,
//     TestADeleteRecordedBeforeItsObjectsCreateReachedTheCacheStillHoldsTheKey,
//     TestADeleteAfterItsCreateRanStaleStillWaitsForTheCreate
//     and TestAKeyIsHeldForMaxHoldAtMostThenRunsCountedAsStale.
//   - Only that key waits. The worker lets a held key go and takes the
//     next one; the key is added again when its informer applies more,
//     never by polling
//     (TestOnlyTheHeldKeyWaitsAndItIsAskedAgainOnlyWhenItsInformerAppliesMore).
//   - Records are dropped at the first sweep after their cache has
//     caught up, whether or not their key is reconciled again (a sweep
//     runs whenever the records have doubled since the last, once there
//     are 128 at least, and on [Guard.Pending]): memory follows the
//     writes in flight, not the writes made
//     (TestRecordsAreDroppedOnceTheCacheCaughtUpWithoutTheirKeyComingBack).
//
// # What it cannot do
//
//   - See other writers: it orders a controller after its own writes, not
//     after everyone's. Another writer's change may still be missing from
//     the cache; the resourceVersion on an update is what turns that into
//     a 409 instead of a lost write.
//   - Survive a restart or a change of leader: the records live in one
//     process. A new leader's first reconciles can read a cache older than
//     the old leader's last writes ([sharedinformer.Informer.Fresh] is
//     the barrier for that moment).
//   - Record a write whose answer never came (a timeout after the server
//     stored it), or came with no resourceVersion (Write then returns an
//     error wrapping ErrAnswerUnreadable): there is no resourceVersion to
//     wait for.
//
// Metrics, when Options.Metrics is set, labelled with Options.Name:
// listwatch_guard_held_total, listwatch_guard_hold_duration_seconds,
// listwatch_guard_stale_reconciles_total and listwatch_guard_pending_writes.
package readyourwrites
