// Package sharedinformer ties the pipeline together: one reflector, one
// DeltaFIFO and one indexer, shared by any number of event handlers. It is
// what most controllers use directly; the packages it is built from are
// there to be understood.
//
// # Where it sits
//
//	reflector ──▶ DeltaFIFO ──Pop──▶ process (Run's goroutine):
//	                                   1. indexer.Add / Update / Delete
//	                                   2. every handler's buffer
//	handler goroutines (one each) ──▶ OnAdd / OnUpdate / OnDelete ──▶ usually workqueue.Add(key)
//	listers ◀── the indexer ──▶ your workers read here, never the API server
//
// # Usage
//
// A Factory is the front door. Name the Go type and the scope; the
// resource ("pods") comes from the type, through the scheme and the API
// server's discovery, so it cannot disagree with the type:
//
//	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme})
//	pods, err := sharedinformer.InformerFor[*corev1.Pod](ctx, factory, sharedinformer.InNamespace("default"))
//	reg, err := pods.AddEventHandler(sharedinformer.EnqueueKey[*corev1.Pod](queue))
//	factory.Start(ctx)
//	if err := factory.WaitForCacheSync(ctx, reg); err != nil { // pitfall 4
//		return err // names each informer not synced, and its last failure
//	}
//	pod, err := pods.Lister().Namespace("default").Get("web-0") // from the cache
//
// Asking the factory twice for the same type and scope returns the same
// informer, so controllers in one process share one LIST, one WATCH and
// one cache. InformerFor checks what can be checked when it is called: the
// selectors parse, the type is in the scheme, the server serves it, and
// InNamespace is given only for a namespaced resource (Nodes have no
// namespace: a *ScopeError).
// When the resource comes from the Go type, through discovery, a kind the
// server does not serve (a CRD not installed) is an error at once. A
// resource named with ForResource is checked against a typed informer's
// kind where discovery knows it (another kind: a *KindError), and taken
// as given where it does not (the CRD may come later), unless the mapper
// names it a misspelling of one it knows, and always for
// *unstructured.Unstructured
// and metadata-only informers
// (whose resource is looked up only for its scope, when a namespace is
// given).
// What only time can fix is waited for: a 403 from RBAC is retried, and
// a resource the server's discovery does not list (a CRD not installed
// yet, or deleted since), or lists only cluster-scoped while the
// informer reads one namespace (the CRD created again with the other
// scope), is reported once as reflector.ErrNotServed and watched for
// through discovery, without LIST or WATCH, until it is served. A version no longer served while the resource is served in
// another (a CRD that moved to v1) is reported as a
// *reflector.VersionNotServedError naming the versions served; moving a
// version deletes nothing, so the cache keeps what it held, unwatched
// (changes and deletions since are not in it), and no handler hears of a
// delete. WaitForCacheSync reports either as a *NotSyncedError when its
// ctx ends (Factory's also once FactoryOptions.SyncTimeout passes); Ready
// gives the same report at once, without waiting, for a readiness probe.
//
// Each InformerFor is one hold on its informer; Release gives one back,
// and the last stops that informer alone (its handlers' Registration.Err
// is then ErrInformerReleased). Asking again makes a fresh one once the
// released one has stopped; asked on an informer's own goroutine (a
// handler, OnError) before then, InformerFor returns a
// *StillStoppingError at once rather than wait for itself. An informer
// stopped because the ctx given to Start ended is not handed out again
// either: InformerFor makes a fresh one for the next Start, so one
// factory may serve successive terms.
//
// The factory's clients, its informers' and the writers Factory.RESTClient
// builds, share one client-side rate limiter: the rest.Config's QPS and
// Burst, where zero (what every kubeconfig gives) means DefaultQPS, 50 a
// second, and DefaultBurst, 100, not client-go's 5 and 10. When requests
// were held back by it for a tenth of 10 s or more, the factory logs a
// warning, at most every 10 s; with FactoryOptions.Metrics, each wait goes
// into client-go's histogram rest_client_rate_limiter_duration_seconds.
//
// New builds one informer from an explicit ListerWatcher, as the factory
// does underneath; the examples use it to show the parts.
//
// # Handlers
//
// Most handlers only turn an event into a key for a workqueue, and three
// cover most controllers: EnqueueKey (the object's own key), EnqueueOwner
// (its controller's key: the children a controller makes) and
// EnqueueMapped (any keys a function computes). Filtered puts predicates
// in front of any handler: GenerationChanged, LabelsChanged,
// MatchingLabels, or your own. A filter only saves work; one that drops a
// delete can strand what the reconcile made for the object, so the
// predicates here pass every delete.
//
// # Guarantees
//
//   - The cache is updated before handlers are told: a handler reading the
//     lister sees at least the change it is handling
//     (TestAHandlerReadingTheListerAlreadySeesTheChangeItIsToldAbout).
//   - Each handler gets every change the cache takes in order, on its own
//     goroutine, from its own buffer: a slow handler delays nobody else.
//     (A change the transform rejects or an IndexFunc fails on is taken
//     by neither: see SetTransform and Options.OnError.) Its buffer grows
//     as needed, shrinks after a burst, and warns past BufferPolicy.WarnDepth.
//     Proved by TestEveryHandlerGetsAddUpdateAndDeleteInOrder,
//     TestAStuckHandlerDelaysNoOtherHandler,
//     TestAddNeverBlocksWhileTheHandlerIsStuck,
//     TestAHandlersBufferGrowsForABurstAndShrinksBackAfterIt and
//     TestAHandlerFallingBehindIsWarnedOfOncePastWarnDepth.
//   - A panic in a handler is recovered and reported (Options.OnError).
//     Proved by TestAPanickingHandlerIsReportedAndTheInformerGoesOn and
//     TestAPanickingHandlerIsReportedAndKeepsReceiving.
//   - A deletion the watch missed (found by a relist) reaches every handler
//     as OnDelete(lastKnown, finalStateUnknown=true): your controller must
//     be level-triggered, converging on the current state rather than
//     replaying events (pitfall 1). Proved by
//     TestADeleteMissedDuringAnOutageArrivesWithFinalStateUnknown,
//     TestDeletesMissedDuringAnOutageReachEveryHandlerWithFinalStateUnknown
//     and ExampleHandler_finalStateUnknown. So does an object a relist
//     finds deleted and made again under its name (another UID): the
//     handlers hear OnDelete(old, true), then OnAdd of the new object,
//     not an update from one object to another (client-go sends an
//     update). Proved by
//     TestADeletionTheWatchMissedBehindARecreatedNameReachesHandlersAsADelete.
//   - A handler added late first receives the current cache as
//     OnAdd(obj, true); its Registration syncs once it has handled them.
//     Proved by TestALateHandlerGetsTheCacheReplayedAsItsInitialList and
//     TestListenerSyncsOnceUpstreamSyncedAndEveryInitialAddWasHandled.
//   - Shutdown is bounded: once Run's context ends no handler call starts;
//     Run returns when each handler's call in progress has, and what was
//     still buffered is dropped. A removed handler's Registration.Stopped
//     closes once its call in progress has returned. Proved by
//     TestRunReturnsOnlyOnceTheCallInProgressHasAndStartsNoOther,
//     TestRunReturnsPromptlyAfterCancelAndNoBufferedCallStarts and
//     TestStoppedTellsWhenARemovedHandlersCallInProgressHasReturned.
//   - Resync replays the cache as OnUpdate(obj, obj) to handlers whose
//     period elapsed: each object once for each resync it was due at,
//     also when one replay is still being delivered as the next begins
//     (a reminder still queued as the next resync begins answers both;
//     a pop loop more than 64 resyncs behind loses the oldest's);
//     a relist tells no handler of an object that did not change,
//     unless a resync skipped it while it was queued. It makes no API
//     call (pitfall 6). Proved by
//     TestResyncRemindsOnlyHandlersWhosePeriodElapsedAndMakesNoRequest,
//     TestAHandlerIsNeverResyncedMoreOftenThanItsPeriod,
//     TestAResyncStillBeingPoppedWhenTheNextTickComesReachesTheHandlersItWasFor,
//     TestACoalescedTombstoneDoesNotCostAKeyBehindItsResync,
//     TestAResyncWhoseCacheFillsBeforeItsReplayStillRemindsItsHandlers,
//     TestARelistOfAnObjectNotYetCachedAtTheResyncRemindsNoHandler,
//     TestAResyncThatSkippedAKeyWhoseUpdateTheIndexRefusesStillReminds,
//     TestTheDueTableStaysBoundedWhileNothingPops,
//     TestARelistLongAfterAResyncTellsNoHandlerOfAnObjectThatDidNotChange and
//     TestResyncDeliversUpdatesAndMakesZeroAPIRequests.
//   - Objects handed to handlers and returned by listers are the cache's
//     own, but for a delete the watch reported, whose object is its final
//     state as the watch gave it, one object shared by every handler:
//     never modify them (pitfall 2; Options.DetectMutations). Proved
//     by TestHandlersAndTheListerGetTheCachesOwnObjects,
//     TestADeleteHandsEveryHandlerTheSameFinalStateNotTheCachedObject and
//     TestAHandlerThatMutatesTheCacheIsCaughtByTheMutationDetector.
//     Cached objects also share with each other what they repeat (for a
//     Go type their namespace, owners' strings and managedFields' strings,
//     times and field sets; for an unstructured object its managedFields
//     entries: see Memory), so a change made in place to a shared time,
//     field set or entry shows in the others cached with it; a DeepCopy
//     copies every shared value that could change. Proved by
//     TestCachedObjectsShareTheValuesTheyRepeat and
//     TestCachedUnstructuredObjectsShareTheManagedFieldsEntriesTheyRepeat.
//
// # Memory (pitfall 7)
//
// A cache holds every object of its scope. SetTransform can drop what you
// never read (managedFields, of which the informer already shares what
// one client writes alike: see below); a
// namespace or label scope holds less; a metadata-only ListerWatcher
// (reflector.NewMetadataListerWatcher) holds only metadata. Two informers
// of different scope are two caches, even through a Factory.
//
// What the cached objects repeat is kept once: each object of a Go type
// that the cache takes, after the transform, is pointed at one copy of
// its apiVersion, kind, namespace and generateName, its owners'
// apiVersion, kind, name and UID, and its managedFields entries'
// strings, times and field sets, and an unstructured object at one copy
// of each managedFields entry, shared with the objects cached before it
// (intern.go says what, and why not labels).
// Written by one client, one field set serves thousands of objects; for
// 100k custom resources of about 1 KiB it saves about a tenth of a Go
// type's heap, a fifth of a metadata-only object's and two fifths of an
// unstructured one's (docs/17, "Sharing what objects repeat").
//
// # Concurrency
//
// Run's goroutine pops the DeltaFIFO and holds the informer's mutex while
// it updates the indexer and fills handler buffers, so handler
// registration sees all or none of one key's changes. Handlers run on
// their own goroutines, never under that mutex.
package sharedinformer
