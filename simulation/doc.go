// Package simulation runs whole replica sets of a controller built with
// this library on simulated time, under a fault schedule chosen by a
// seed, and checks what leader election and sharding promise against
// the history of the run. It is this module's answer to "explore
// schedules, don't enumerate them" (docs' design, 4b): thousands of
// seeded runs a minute, each failing seed a one-line replay.
//
// # What runs
//
// One testing/synctest bubble holds a fakeapiserver.Server and 3 to 5
// replica slots. Each replica reaches the server over an in-memory
// network of its own, through a fault link of its own, so one replica
// can be partitioned, paused or see errors while the others do not.
// Three scenarios:
//
//   - Sharded: every replica is a member of two rings, "web" and
//     "web-api" (names that share a prefix, as in chaos/replicas), and a
//     sharder candidate of both; every ConfigMap of the run is sharded in
//     both rings.
//   - LeaderElected: every replica is a candidate for one Lease; the
//     leader reconciles every ConfigMap.
//   - CustomResources (-scenario=crds): the life of shared informers
//     under a CRD that comes and goes. Each replica runs three holders
//     on one sharedinformer factory and a fourth, whose informer lists
//     in pages of two, on a factory of its own. A holder asks
//     InformerFor for the Widgets (sim.listwatch.dev, unstructured,
//     ForResource) at v1 or v2, waits for the sync, holds the informer
//     a while, and releases it: by itself (these holds share one
//     informer), during its sync wait, from its handler (and asks again
//     there), from the factory's OnError, by handing it over, or once
//     the ctx it gave Start has ended; each of the last five asks for a
//     scope of its own, so that its release is its informer's last. A
//     hold handed over has a handler that works 100 to 500 ms on each
//     event, so its informer stops only once the current call returns;
//     a successor on another goroutine asks for the same scope 1 to
//     100 ms after the release began, meets the informer still stopping
//     and waits for it (as a reconcile loop asking again would), then
//     holds the fresh one through its sync and releases it. The
//     choices are drawn from the seed and the holder's name. A typed
//     keeper on a third factory asks once for an informer of a Go
//     type of the Widgets (v1, decoded into a struct the factory's
//     Scheme knows, as a controller author's generated types are) and
//     keeps it; the quiescent checks judge it as a kept hold. Admin
//     writers create, update and delete Widgets five times a second
//     while the CRD is served. It is a scenario of its own, not faults added to the
//     others, because what it exercises (holders, Release, a resource
//     that stops being served) is no part of a leader's or a member's
//     term there, and its invariants are about informers, not keys.
//
// A term's controller is chaos/replicas' one: an informer, a workqueue,
// and a reconcile that reads a parent from the cache, works 100 ms, then
// writes an annotation on the parent and on its child for the ring
// (creating the child, owned by the parent), every write a merge PATCH
// guarded by the resourceVersion read, and recorded in a read-your-writes
// guard whose hold the workers wait on (readyourwrites). Writers, as an admin with no
// faults, update, delete and create parents twice a second. In one
// sharded seed in two (grouped: groups.go) they also change owners at
// each tick, among the first Family parents and their children: a
// parent grouped under an owner that is not sharded (one of Groups,
// Secrets, as ConfigMaps under a Deployment), moved to another group or
// ungrouped, which, when its new ring key lands on another member,
// drains it and its children with no member joining or leaving; a child orphaned, or given to a parent, its own or another,
// drained or not. A regrouped parent is often put back a moment later
// (its drain taken back while its member may be letting it or its
// children go) or deleted a moment later, and a deleted parent's
// children are often deleted only a moment after it, as a garbage
// collector behind its watch does. The ring's controller adopts an
// orphan of its ring back under the orphan's own key (its ring key). Lease timing
// is short (4 s, 3 s, 500 ms), so every fault ends terms.
//
// # Faults
//
// NewSchedule draws a Schedule from a seed: a list of timed Faults that
// prints, replays and shrinks. Per replica: Latency (each request up to a
// bound), Hang (each request, with a probability, until its client gives
// up or the window ends; a request still waiting then is served, late,
// as a recovered server serves what it held), Errors (429, 500 or 503
// answers with a probability; half the writes answered 500 are served
// first, as kube-apiserver's ServerTimeout answers a write etcd
// committed too slowly, with a Retry-After client-go acts on; 409 as
// kube-apiserver gives it, a
// conflicting writer changing the object just before a PATCH or PUT,
// never a made-up answer), Forbidden (403 for each new request for the
// ConfigMaps, as RBAC taking access away for a while does: Leases,
// discovery and open watches go on), Lag (its watch streams stay open
// and quiet, their events queued on the server and delivered at the
// window's end, as from a watch cache that fell behind, while its other
// requests are served: its caches lag its own writes), Skew (its clock, on which its
// leases, renew deadlines and retries are timed, runs up to 10% fast or
// slow for a while: two clocks then differ by at most 1.1/0.9, inside
// the documented bound of LeaseDuration/RenewDeadline), Partition (its watches end, every
// request hangs, likewise until it heals), Pause (its requests wait, its
// timers fire only after the resume, its reconciles stop where they are,
// as SIGSTOP does; the replica's informer.Clock is the pausable one) and
// Kill (its context cancelled and everything of it stopped; a new
// replica with a new identity takes the slot). For everyone: CutWatches,
// Compact (every re-watch answers 410), and the Lease deletes (a
// member's, the elected sharder's, the leader's). NewCRDSchedule, the
// custom resources scenario's, keeps Latency, Hang, Errors, Partition,
// Pause, Kill, CutWatches, Compact and Lag, and adds RemoveCRD (its Widgets deleted, its
// watches ended, its paths 404), InstallCRD and MoveCRD (served at the
// other version: its Widgets stay), about twice as often as the others.
// Half the removes are rescopes (RescopeCRD): the CRD is deleted and at
// once created again with the other scope, namespaced ↔
// cluster-scoped, the only way a CRD's scope changes; while it is
// cluster-scoped no namespace of Widgets is served. One schedule in
// three also re-creates the CRD for another kind under the same plural
// (RekindCRD, Widget ↔ Gadget, drawn apart so that every other fault
// stays where it was): the holders' unstructured informers hold
// Gadgets as they held Widgets, and the typed keeper's informer of the
// widget Go type can decode none of them.
// Half the moves are flips: the CRD moves back just before the first,
// second or third discovery request of its group after the move (or
// within 50 ms), so that a served check, which asks discovery in a few
// requests, can see a move half done. The CRD's last install is followed by at least 3 s of writes (its
// For), so there are Widgets to compare; a run whose faults leave the
// CRD removed, cluster-scoped or holding Gadgets is judged so at
// quiescence, and then,
// in four seeds of five, the CRD is installed again, written to for 3 s
// and judged again, within Settle and two of the reflectors' longest
// backoffs (restoreCRD): of seeds 1–2,000, four in five compared
// Widgets, a quarter judged a removed CRD and a fifth a cluster-scoped
// one.
//
// # Invariants
//
// Checked on every run, from a history recorded in the bubble (one
// clock). Each is named as a failing run reports it, and each item names
// the test that shows the checker catches its violation; that the
// library keeps them all is TestAReplicaSetWithNoFaultsKeepsEveryInvariant
// (all three scenarios) and
// TestTwoHundredFaultSchedulesOfALeaderElectedReplicaSetKeepEveryInvariant.
// A pause excuses what it could have caused and nothing from before it
// began (TestAPauseLongAfterTwoLeadersOverlappedDoesNotExcuseTheOverlap,
// TestAPauseExcusesOnlyTheMovesFromItsStartOn).
//
//   - "One reconcile per key": no two members reconcile one key of one
//     ring at once, nor one leader replica in two terms, unless one of
//     them reconciles a deleted object (its cache still holds it, or it
//     was deleted while the reconcile ran) while the object created again
//     under that name is reconciled by its new owner, or each reconciles
//     another deleted life of the name: sharding promises one object,
//     not one name
//     (TestAControllerThatIgnoresItsShardIsCaughtReconcilingAKeyInTwoMembersAtOnce,
//     TestAReconcileOfALeadersEarlierTermOverlappingItsNextTermsBreaksOneReconcilePerKey;
//     the excuse: TestAMemberReconcilingADeletedObjectsGhostDoesNotBreakOneReconcilePerKey,
//     TestAReconcileOfAnObjectDeletedWhileItRunsOverlapsItsSuccessorsLife).
//   - "One leader": no two leader terms overlap, but for a candidate
//     that could not know the deposed leader led, by its looks at the
//     Lease: it never saw the Lease before the delete, or its looks had
//     found it absent, without a break, for a LeaseDuration, the Lease
//     put back and deleted again between two of them
//     (TestTheFreshCandidateExcuseDoesNotCoverALateTerm,
//     TestTheFreshCandidateExcuseGoesByTheCandidatesLooks).
//   - "A term is lost only to another": a leader whose Run says another's
//     write of the Lease ended its term lost it to a write that landed
//     since its term began, of another replica or of the conflicting
//     writer of a 409 fault, or to a delete of the Lease, never to its
//     own writes (TestATermLostToItsOwnWritesBreaksATermIsLostOnlyToAnother).
//   - "Fences grow": a term that began after another holds the greater
//     fence (TestATermThatBeganLaterWithoutAGreaterFenceBreaksFencesGrow).
//   - "Moves only by drain": a live member's object moves to another
//     member only through an acknowledged drain, as the checker's own
//     watch sees it, the acknowledgement being the member's own write
//     (a drained object's label taken off by a sharder's write, which
//     the server side tells by its user agent, is no acknowledgement);
//     a relabel seen only across a gap of that watch (a
//     410 and its relist) is not judged, nor one from the moment the
//     member's replica was paused in that term, when the sharder may
//     take its Lease over, until a LeaseDuration (on the slowest clock)
//     and a request's latency after the pause ended, by when such a
//     member has learnt it and its term has ended
//     (TestAPauseDoesNotExcuseAMoveLongAfterTheMemberResumed,
//     TestAnObjectMovedOffAMemberInItsTermBreaksMovesOnlyByDrain,
//     TestAnObjectUnlabelledWithoutADrainThenGivenToAnotherLiveMemberBreaksMovesOnlyByDrain,
//     TestADrainedObjectUnlabelledByTheSharderNotItsMemberBreaksMovesOnlyByDrain).
//   - "Children follow parents": no child reaches a member (assigned, or
//     moved off a dead member) while its parent is labelled for another
//     member whose term runs, nor is let go by the member its parent is
//     still labelled for
//     (TestAChildAwayFromItsParentsLiveMemberBreaksChildrenFollowParents,
//     TestAChildMovedOffADeadMemberAwayFromItsParentsLiveMemberBreaksChildrenFollowParents).
//   - "Converged": within ConvergenceBound of the last fault every object
//     carries the label of the member the live ring assigns it to (a
//     child its parent's), every parent was reconciled by its owner at
//     its latest tick (but a grouped one, whose events bring its group's
//     key), no orphan's parent exists (its ring's controller adopts it),
//     and, leader-elected, no child outlives its parent (the UID its
//     controller reference names: a parent made again under the name is
//     another; the built-in controller deletes what the writers leave
//     it)
//     (TestAControllerThatNeverConvergesBreaksConverged,
//     TestAnOrphanWhoseParentExistsBreaksConverged,
//     TestAChildOfADeletedParentWhoseNameWasTakenAgainBreaksConverged).
//   - "Cache equals server": then, at quiescence (synctest.Wait) and
//     within the rest of the bound, every open term's cache equals the
//     server, and every leading sharder's cache of all objects holds as
//     many as the server (read from its cached-objects gauge)
//     (TestACacheThatDiffersFromTheServerBreaksCacheEqualsServer).
//   - "Handler stream consistent": each term's informer has a second
//     handler that replays what it is told; key by key its events read
//     as a life (an add of an object it does not hold, updates whose old
//     object is the last it was given and whose resourceVersion never
//     goes back within a life, a delete of one it holds), and at
//     quiescence what it holds by its events is the term's cache
//     (TestATermsHandlerToldOutOfOrderOrOfOtherObjectsBreaksHandlerStreamConsistent,
//     TestAnUpdateToAnOlderResourceVersionBreaksTheStream).
//   - "Read your writes": each term's controller reconciles through a
//     read-your-writes guard (readyourwrites, at its default MaxHold; in
//     one seed in two with OpaqueResourceVersions), and no reconcile of a
//     key reads its parent older than an earlier reconcile of the key
//     wrote it, misses a child that one created, or, leader-elected,
//     reads a child of the UID that one deleted (a sharded reconcile
//     never runs for a parent gone, sharding.Reconciler's rule), unless
//     the guard let the key run past MaxHold, which it counts, and no
//     sooner than MaxHold after the key's last write, by the replica's
//     clock
//     (TestAReconcileThatReadsOlderThanItsKeysOwnWriteBreaksReadYourWrites,
//     TestAStaleRunBeforeMaxHoldIsNotExcusedByAPauseThatCouldOnlyDelayIt).
//     The child's name is fixed, so a second create can only answer
//     AlreadyExists; a read that misses the reconcile's own child is
//     what, with generateName, would create a second: this is the
//     simulator's "nothing created twice". Each run counts the reads
//     judged and the stale runs in Result.Coverage (docs/18 says which
//     seeds run stale, and why).
//   - "A sharder keeps to its ring": in the sharded scenario, whose two
//     rings' names share a prefix, no write a sharder sends reaches a
//     shard Lease labelled with the other ring (its Lease client's user
//     agent names its ring)
//     (TestASharderWritingAnotherRingsLeaseBreaksASharderKeepsToItsRing,
//     TestASharderCreatingOrRelabellingALeaseIntoAnotherRingBreaksASharderKeepsToItsRing).
//
// The custom resources scenario checks its own, recorded as they break
// or read at quiescence; a pause excuses the calls' bounds, and
// TestTwentyFaultSchedulesOfTheCustomResourcesScenarioKeepEveryInvariant
// shows the library keeps them:
//
//   - "Sync wait returns": a WaitForCacheSync on a holder's informer and
//     handler returns within a second of both having synced, or of the
//     hold's release when it was the informer's last; a wait whose
//     resource is not served is bounded by its 10 s ctx, as the library
//     documents (TestASyncWaitThatOutlivesItsReleaseOrSyncBreaksSyncWaitReturns).
//   - "Release returns" and "Re-ask returns": a Release from a handler or
//     OnError returns within a second, one from elsewhere within 10 s and
//     without error; InformerFor returns within a second from a handler
//     (a *StillStoppingError while the released informer stops), within
//     10 s elsewhere
//     (TestACallPastItsBoundBreaksReleaseReturnsUnlessItsReplicaWasPaused).
//   - "Released informer stops": a released hold's handler stops within
//     40 s, and at quiescence each factory's metrics Registry holds the
//     names of the informers held and no other
//     (TestQuiescentChecksReportAStaleCacheASilentInformerAndANameNotGivenBack).
//   - "No delete of a live object": a handler never gets a delete for a
//     Widget whose UID the server holds at that moment
//     (TestADeleteOfAWidgetTheServerHoldsBreaksNoDeleteOfALiveObject),
//     but for the case chapter 06 says two looks at discovery cannot rule
//     out: a delete whose final state is unknown (the cache emptied on a
//     "gone" verdict) after the replica's discovery answers were served
//     during two different flips within 5 s, by two different requests,
//     as one for each look would be (the checker cannot tell which look a
//     request was of; a flip's trigger, served after it moved back, is
//     not counted, nor is one request counted twice)
//     (TestALiveWidgetDeletedAfterTwoFlipsMisledItsReplicasLooksIsExcusedAndNothingElse).
//   - "Handler stream consistent", as above, for each hold's handler; a
//     handed-over hold's handler, which works on each event, is judged at
//     its events only
//     (TestAHandlerToldOfChangesOutOfOrderBreaksHandlerStreamConsistent,
//     TestAHandlerThatWasNotToldWhatItsCacheHoldsBreaksHandlerStreamConsistent).
//   - "Held informer equals server" and "not served says so": at
//     quiescence, and within two minutes past the bound (the holders'
//     reflectors back off up to a minute), a held informer of the served
//     version has synced and caches the server's Widgets at their
//     resourceVersions, and one of a version not served has its
//     resource_not_served gauge at 1 and caches nothing if the CRD is
//     removed or cluster-scoped, or holds Gadgets and the informer is the
//     typed keeper's
//     (TestQuiescentChecksReportAStaleCacheASilentInformerAndANameNotGivenBack,
//     TestATypedKeepersStaleCacheBreaksHeldInformerEqualsServer).
//   - "Refused only when not served": once the faults end, an InformerFor
//     refused with a *ScopeError is one of a cluster-scoped CRD, and one
//     refused with a *KindError is the typed keeper's while the CRD holds
//     Gadgets (TestACRDRecreatedClusterScopedIsNotServedToAHeldInformerOfANamespace).
//
// An invariant judges an order of events only in the runs that bring it
// about, so each run also counts the scenario's cases (Result.Coverage:
// a re-ask from a handler that meets its informer still stopping, a
// sync wait ended by its release, a release from OnError, a held
// informer compared with Widgets on the server, the CRD removed,
// cluster-scoped or holding Gadgets, and more), the sweep prints in how
// many seeds each was reached, and CoverageGaps names those a set of
// runs missed (TestCoverageGapsNameEachCaseNoRunReached). A goroutine
// that spins never lets simulated time advance, so no invariant can see
// it: the sweep panics with every stack when one seed runs past
// -seed-timeout of real time (2 minutes by default).
//
// Not built yet: the sharder's own exclusivity per ring (a deposed
// sharder's PATCHes are guarded, and its term has no recorded deadline);
// a Controller's reads and writes (Options.Controller: the simulator
// sees its reconciles, and with Observe its informer, not what each
// reconcile read or wrote); "nothing created twice" across
// terms, which the guard does not promise (its records live in one
// process). Until then, readyourwrites' own test stands for the last
// within one process: TestTheGuardMakesNoDuplicateGenerateNameChildrenUnderChurn.
// (A handler's stream and the guard's hold, which these lines once
// named, are checked above: "handler stream consistent", "read your
// writes".)
//
// # Your own controller
//
// Options.Controller runs a controller of yours in place of the built-in
// one: its Run is called for every term (the leader's, or a member's in
// each ring) with a Term that holds a rest.Config through the replica's
// faults, the namespace and selector of the term's objects, the shard
// (for a member: wrap your reconcile in sharding.Reconciler), the
// replica's pausable clock and a trace hook. Pass Term.Trace as your
// workqueue's Options.Trace: its got and done events are how the
// simulator sees your reconciles, for "one reconcile per key".
// Controller.Converged, if set, is your end state, asked each second
// once the faults stop; Options.Label is the label the writers put on
// the parents, for a controller that selects its own, and
// Options.GarbageCollector runs kube-controller-manager's garbage
// collector, for a controller that relies on it (the local control
// plane runs none, and neither does the simulator by default). The
// skeleton's TestTheSkeletonKeepsASecret…
// (examples/skeleton/sim_test.go) is a whole example:
//
//	res := simulation.Check(t, simulation.Options{Seed: seed, Scenario: simulation.LeaderElected, Label: "app=demo",
//		Controller: &simulation.Controller{
//			Run: func(ctx context.Context, term simulation.Term) {
//				_ = control(ctx, term.Config, term.Namespace, term.Trace)
//			},
//			Converged: secretsMatchConfigMaps,
//		}}, nil)
//
// Observe(term, inf) hands the simulator your informer of the term's
// ConfigMaps: its handlers' events are then judged ("handler stream
// consistent") and, at quiescence, its cache is compared with the
// server ("cache equals server"), as the built-in controller's are
// (TestAnObservedInformerStoppedAfterItsSyncBreaksCacheEqualsServer).
// Without it the simulator compares no cache of yours.
//
// # Running and replaying
//
//	go test -tags simsweep ./simulation -run 'TestSimulate$' -seeds=10       # 10 seeds
//	go test -tags simsweep ./simulation -run 'TestSimulate$' -seed=1234 -v   # replay one seed
//	go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=leader -seeds=1000 -first=5000
//	go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=crds -seeds=1000
//	make sim SEEDS=1000 SIM_PROCS=2                                 # no -race, two processes at GOMAXPROCS=1; seeds/minute and simulated/real
//	make sim SEEDS=1000 SCENARIO=leader TIMING=15s/10s/2s                 # kube-controller-manager's Lease timing
//
// A failing seed prints its replay command, its schedule, the history
// around each violation, and (with -shrink, the default) the smallest
// schedule found by removing one fault at a time that still breaks the
// same invariant; -history=FILE writes the whole history, then the
// library's debug logs, every write a replica sent with the status it
// got, every failed reconcile, the trace events, and, for a run that did
// not converge, every goroutine's stack (a request that never returns
// shows there). A %d in FILE is the seed, so a -keep-going sweep keeps
// one file per failing seed, and a replay (-seed) writes its history
// even if it passed, to set beside a failing one. In your own test,
// Check runs one seed and returns a Result; its Options.Logger and
// Options.Trace receive the same.
//
// A seed fixes the schedule and every random draw of the library's: the
// jitter of its retries and the member ids (Check seeds internal/random;
// a member's k-th id is the same on every run, whichever replica starts
// first). It cannot fix the runtime's order of goroutines that wake at
// one instant of simulated time, so it keeps them from meeting at the
// server. Every request but discovery spends 1 µs to 1 ms on the wire,
// after any hang or pause that held it, and that delay and the request's
// faults are drawn from the seed, the slot, the request itself (method,
// path, query, body) and how many like it the slot sent before, never
// from the order different requests reached the link (requestRand;
// TestRequestsSentTogetherAreServedInAnOrderTheSeedChooses,
// TestARequestsFaultDoesNotDependOnTheOrderRequestsArrive). So which of
// two replicas' writes lands first, and every fence and resourceVersion
// after it, is the seed's choice. Starts are spread the same way: a
// replica comes up 1 to 50 ms after it is started, at the run's start or
// restarted, and its sharders and members start 1 to 10 ms apart, drawn
// from the seed and the replica's name (bootTimes); a start that falls
// in a pause waits for the resume and then its delay again. What is
// left to the runtime is the order inside one process (a watch event
// and a worker's Done at one instant), so a replay is the same run in
// its schedule and ids, not always event for event (TestReplay,
// -seed=N -replays=K, reports how often it is), and a failure may need
// a few replays (docs/18 measures the rate).
//
// make test runs TestAReplicaSetWithNoFaultsKeepsEveryInvariant (all
// three scenarios, no faults: the baseline), 200 fault schedules of the
// leader-elected scenario with -race, 10 s of faults each, over two
// processes (TestTwoHundredFaultSchedulesOfALeaderElectedReplicaSetKeepEveryInvariant:
// 55 s on a quiet 2-core machine), the tests of Options.Controller, and
// the skeleton's three seeds (examples/skeleton), and 24 seeds of the
// custom resources scenario with -race (1 to 20, and four that reach
// its rarest case), 10 s of faults each
// (TestTwentyFaultSchedulesOfTheCustomResourcesScenarioKeepEveryInvariant:
// 12.6 s on a 2-core machine beside one other busy process); the
// sweep's test is
// built only with the simsweep tag.
//
// # What it has found, and where it stands
//
// Its record (what each sweep found, on which code, at how many seeds a
// minute, and where a sharded seed's CPU goes) is in
// docs/18-testing-your-controller.md, "The sweep's record", beside the
// table of bugs put back and the seeds that found them.
//
// # What it does not model
//
// See fakeapiserver's doc for the server. Here: a paused replica's
// informers keep their goroutines (their watches are cut instead, and
// their requests wait), discovery requests meet errors but no latency,
// hang or pause (client-go's discovery cache holds a mutex across its
// requests, and a goroutine waiting on a mutex is not durably blocked:
// the bubble's clock would stop, and nothing could end the wait; a sweep
// hung so), a Skew reaches only what times itself on the replica's
// informer.Clock (leader election, sharding, the read-your-writes
// guard, the factory and Term.Clock),
// not client-go's own timeouts, and
// apimachinery's global error handlers are emptied while a run lasts
// (their backoff sleeps decades of simulated time in a bubble).
package simulation
