// Package sharding spreads one controller's objects over all of its
// replicas: each replica owns part of them, caches only those, and
// reconciles only those. Leader election (package leaderelection) keeps
// one replica busy; sharding keeps every one busy. docs/16-sharding.md
// tells the design and its trade-offs.
//
// # Where it sits
//
// Beside the data flow, like leader election, and in front of it: a
// label on each object, written by the sharder, decides which replica's
// informer receives it.
//
//	Member.Run ──renew──▶ Lease shard-<ring>.<member>     (one per replica and term, labelled with both)
//	Sharder.Run ──poll (by ring label)──▶ shard Leases ──▶ alive members ──▶ Ring
//	Sharder.Run ──metadata informer over all objects──▶ PATCH label shard.listwatch.dev/<ring>=<member>
//	replica: informer WithLabels(shard.Selector()) ──▶ workqueue ──▶ Reconciler(…, your reconcile)
//
// # Usage
//
// In every replica, a member and a sharder candidate:
//
//	leases, err := leaderelection.NewClient(cfg)
//	member, err := sharding.NewMember(sharding.MemberConfig{
//		Client: leases, Namespace: "kube-system", Ring: "my-controller", Name: podName,
//		Run: func(ctx context.Context, shard sharding.Shard) {
//			// a factory and informers scoped with si.WithLabels(shard.Selector()),
//			// a stable si.WithName (the selector changes every term) and
//			// si.WithReflector(sharding.RetryTuning(lease)); a queue whose
//			// RateLimiter is sharding.RetryLimiter(lease); then until ctx ends:
//			workqueue.Run(ctx, queue, sharding.Reconciler(shard, lister, client, "configmaps", reconcile), opts)
//		},
//	})
//	sharder, err := sharding.NewSharder(sharding.SharderConfig{
//		Config: cfg, LeaseClient: leases, LeaseNamespace: "kube-system", Ring: "my-controller",
//		Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")},
//	})
//	go sharder.Run(ctx)
//	err = member.Run(ctx)
//
// examples/sharded is a whole program. Under RBAC, bind SharderRules to
// the sharder's identity and MemberRules, with what its controller
// needs of its own, to the members'.
//
// # Invariants
//
//   - An object is owned by the member its shard label names, and only
//     while it carries no drain label. A value that cannot be part of a
//     Lease name (LeaseName) names no member: the object is assigned
//     afresh. The labels and the Leases are all the state there is: the
//     sharder keeps none, and a new one resumes. Proved by ExampleShard,
//     TestAShardLabelThatCannotNameALeaseIsReassignedAndReportedOnce and
//     TestANewSharderFinishesTheRebalanceTheOldOneStarted.
//   - A member reconciles only while its term lasts: its context ends at
//     its last successful renew plus RenewDeadline, before the sharder,
//     counting LeaseDuration on its own clock, can judge it dead and move
//     its objects. A member id is used for one term only
//     (TestAMemberThatCannotRenewStopsByItsRenewDeadlineAndRejoinsUnderANewID;
//     the context ends at the term's deadline: leaderelection's
//     TestTheWatchdogEndsATermAtItsDeadlineAndHealthyJudgesTheLastRenew).
//   - A member is dead only for certain: its Lease released by it, or
//     taken over by the sharder with a write guarded by the
//     resourceVersion it judged expired (or absent), which fails if the
//     member renewed. A member merely not seen renewing — by a new
//     sharder, through failed polls, or with its Lease deleted — keeps its
//     objects. Proved by
//     TestAMemberThatRenewsWhileAnotherTakeoverHangsIsNotTakenOver,
//     TestAMemberReleasedAfterItWasJudgedExpiredHasItsObjectsMoved,
//     TestANewSharderDoesNotTakeOverAMemberItHasNotYetSeenRenew,
//     TestADeletedMemberLeaseIsWaitedOutFromWhenTheSharderFirstSawItGone
//     and TestTheObjectsOfALiveMemberStayWhenSomeoneDeletesItsLease.
//   - A ring's Leases are found by the label LeaseRingLabel, which names
//     the ring exactly: rings whose names share a prefix never read each
//     other's Leases
//     (TestASharderNeverTouchesTheLeasesOfARingWhoseNameExtendsItsOwn).
//   - A live member's object moves only after that member acknowledged
//     the drain, from the worker that holds the object's key (its own,
//     or its absent owner's for a member that keys by ring key) — an
//     object whose controller owner is not sharded too; a child of a
//     sharded parent, once the parent is let go — so no two members reconcile
//     one object at once (within the clock-rate assumption of
//     leaderelection, and with no fencing: see its doc), as long as a
//     member keys each object one way (see Reconciler). Proved by
//     TestAJoinDrainsObjectsWithoutOverlapAndTheRelabelReachesTheOldOwnerAsADelete,
//     TestAnObjectWhoseOwnerIsNotShardedLeavesALiveMemberOnlyByADrain,
//     TestAnObjectDrainedFromAMemberThatKeysByRingKeyIsLetGo,
//     TestADrainIsNotAcknowledgedUnderARingKeyWhileTheObjectsOwnKeyIsReconciled,
//     TestAChildMovesOnlyOnceItsParentHasLeftItsOldOwner,
//     TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain,
//     TestAChildAdoptedWhileDrainedIsNotLetGoAfterItsNewParentIsLabelledForItsMember
//     (a drain names the controller it was issued for, and is acknowledged
//     only while the object still has it: drainvalue.go),
//     TestAChildKeyedByItsOwnKeyIsNotReconciledByTwoMembersWhenItsParentMoves
//     and TestAChildOfAnotherResourceDoesNotReachItsParentsNextMemberWhileItsOwnKeysReconcileRuns.
//   - Absence from a member's cache means "not mine", never "deleted": a
//     relabel reaches the old owner's informer as a delete. Reconciler
//     never calls your reconcile for an absent object; clean up deleted
//     objects with owner references or finalizers
//     (TestReconcilerNeverCallsTheReconcileForAnObjectAbsentFromItsCache,
//     TestAJoinDrainsObjectsWithoutOverlapAndTheRelabelReachesTheOldOwnerAsADelete).
//   - An object with a controller owner reference sits on the ring at its
//     owner's key (RingKey), so it lands with its owner. A child whose
//     owner is sharded follows the owner's handover and never runs ahead
//     of it: it moves once the old owner has let the parent go, just
//     before the parent is given to its new owner. A parent missing
//     from the sharder's cache but on the API server (its watch lags)
//     is waited for, never taken for absent, if it is in its child's
//     namespace: a cluster-scoped parent of a namespaced child is not
//     looked for, and until its watch catches up the child is decided
//     as an orphan, at its own namespace and its owner's name. Proved by
//     ExampleRingKey,
//     TestAChildMovesOnlyOnceItsParentHasLeftItsOldOwner,
//     TestAChildWhoseParentTheSharderHasNotSeenYetWaitsForIt and
//     TestAChildOfAClusterScopedParentTheSharderHasNotSeenYetIsTakenForAnOrphan.
//
// # What it costs
//
// Each member caches about 1/N of the objects. The sharder watches every
// object, through a metadata-only informer: its memory grows with all of
// them, not 1/N. Every assignment and every move is one PATCH from the
// sharder (a move from a live member: three PATCHes, two of them the
// sharder's). For an object whose controller owner the cache lacks, each
// PATCH of the sharder's costs one GET more per sharded resource of its
// owner's API group, a refused one (409, a stale cache) too: two at
// least for a move from a live member
// (TestAnObjectWhoseOwnerTheCacheLacksCostsAGetBeforeEachOfTheShardersPatches);
// while the API server has that owner and the cache does not yet, the
// same GETs come every 100 ms, with no PATCH. Children add
// reads: the sharder GETs a parent's metadata from the API server before
// it moves the parent's children, before a child catches up with its
// parent, and for each child already at a parent's new member before
// that parent follows (its cache may lag its own writes). Its client's
// QPS bounds how fast a rebalance goes.
package sharding
