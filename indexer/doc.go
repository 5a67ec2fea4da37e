// Package indexer is the informer's cache: a thread-safe store of the
// latest state of every object, keyed by [informer.Key], with named
// secondary indices. client-go calls it cache.Indexer (backed by its
// threadSafeMap, in tools/cache/thread_safe_store.go).
//
// # Where it sits
//
//	deltafifo ──Pop(Deltas)──▶ sharedinformer ──Add / Update / Delete──▶ Indexer
//	                                                                        │
//	            lister.List / Get, ByIndex, the DeltaFIFO's key lookups ◀───┘
//
// Exactly one writer, the shared informer's goroutine, applies each popped
// change here first and only then notifies handlers, so a handler that
// reads the cache sees at least the change it is told about. Any number of
// readers (listers, your reconcile workers) read it concurrently, never the
// API server.
//
// # Usage
//
//	idx, err := indexer.New(indexer.Options[*corev1.Pod]{
//		Indexers: map[string]indexer.IndexFunc[*corev1.Pod]{
//			"app": indexer.LabelIndexFunc[*corev1.Pod]("app"),
//		},
//	})
//	err = idx.Add(pod)                               // the informer does this for you
//	web, err := idx.ByIndex("app", "web")            // every Pod labelled app=web
//	prod, err := idx.ByIndex(indexer.NamespaceIndex, "prod") // built in
//	p, ok := idx.Get(informer.Key{Namespace: "default", Name: "web-0"})
//
// # Invariants
//
//   - At most one object per key; a write replaces the whole object
//     (TestAddAndUpdateAreTheSameUpsert,
//     TestIndexerMatchesAMapModelUnderRandomWrites).
//   - Every index is exact after every write: a key is filed under a value
//     iff the IndexFunc returned that value for the stored object. Old
//     values are removed and empty value sets deleted, so nothing leaks.
//     Proved by TestWritesKeepTheIndexExact and
//     TestIndexerMatchesAMapModelUnderRandomWrites.
//   - Writes are atomic. Bad input (a nil or typed-nil object, an object
//     without a name, an IndexFunc error, an unknown or duplicate index
//     name) returns an error that names the problem, and nothing changes.
//     Nothing panics on bad input; New, too, returns an error (for a nil
//     IndexFunc). Proved by
//     TestBadInputIsAnErrorThatNamesTheProblemAndChangesNothing,
//     TestNilAndTypedNilInterfaceValuesAreRejected and
//     TestNewRejectsANilIndexFuncNamingTheIndex.
//   - Returned slices are new (reorder them freely), but the objects in them
//     are the cached objects themselves, shared with every other reader
//     (TestReadsReturnFreshSlicesOfSharedObjects,
//     TestGetReturnsTheStoredObjectItself).
//
// # Never modify what you read (pitfall 2)
//
// Changing a cached object in place corrupts the cache for every reader:
// they see a state the API server never had, and the next update silently
// overwrites your change. Copy first: pod = pod.DeepCopy(), then modify
// and send the copy.
//
// To catch offenders, set Options.DetectMutations: every write then keeps a
// deep copy of the object, and CheckMutations returns a *MutationError
// naming every key whose cached object no longer equals its copy. It costs
// a deep copy per write, about twice the memory, and O(n) deep comparisons
// per check, so turn it on in tests and development, not in production.
//
// # Layout: by namespace
//
// Objects are stored by namespace, each namespace a dense slice plus a
// map from name to position (space.go). That layout is the namespace
// index, built in to every Indexer: ByIndex(NamespaceIndex, ns) copies one
// slice, and nothing else is kept per object for it. client-go files every
// key a second time in a namespace index and looks each one up again on a
// read. Listing a namespace is one memmove. Measured at 100k objects
// (chapter 17, lesson 3), the live heap per cached object, store and
// layout together, is 0.98× client-go's for ConfigMaps and 0.99× for
// Pods (measured before the informer shared what objects repeat; 0.91×
// for ConfigMaps since, chapter 17); the store's own share was not
// measured apart in any record.
//
// # Locking
//
// One sync.RWMutex guards everything. Writes hold it exclusively; reads
// (Get, List, ByIndex, ...) share it, but a read that arrives while a
// writer waits for the readers inside waits behind that writer, as
// sync.RWMutex has it
// (TestAReadArrivingWhileAWriterWaitsForAnotherReadWaitsToo). A writer
// waits for the readers inside, so what matters is how long a read holds
// the lock: listing a namespace holds it for one slice copy, not for a
// walk over an index with a map lookup per key, which is why a writer is
// not starved by readers listing namespaces in a loop (chapter 17 measures
// it against client-go). IndexFuncs and the trace hook run while a write
// holds the lock, so they must be quick and must not call back into the
// Indexer (that would deadlock).
//
// Every read, List included, still sees one consistent state: all of it
// happens under one read lock. (Sharding the lock, the other way to keep
// writers from waiting, would have given that up.)
//
// # Tracing
//
// With Options.Trace set, every change emits an [informer.TraceEvent] with
// Stage [informer.StageIndexer] and one of the Kind constants: KindStored,
// KindDeleted, KindReplaced, KindIndexChanged, KindIndexAdded. With no hook
// no event is built at all. A write emits its events once it is applied
// whole, so a hook that panics stops the events, never a write half-way
// (TestATraceHookThatPanicsLeavesEveryIndexExact).
package indexer
