// Package reflector is where an informer meets the network: a Reflector
// keeps a local store converging to the API server's state of one
// collection, whatever the connection does. client-go's counterpart is
// tools/cache/reflector.go; the names here are its names.
//
// # Where it sits
//
//	kube-apiserver ──LIST (pages), then WATCH from its resourceVersion──▶ Reflector
//	Reflector ──Add / Update / Delete / Replace(list, rv) / Resync──▶ Store (a DeltaFIFO)
//
// It reads through a [ListerWatcher] (a [RESTListerWatcher] for a real
// server, package memlistwatch in examples) and writes into a [Store].
//
// # Usage
//
//	lw, err := reflector.NewTypedListerWatcher[*corev1.Pod](cfg, scheme, reflector.Source{
//		Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: "default",
//	})
//	r, err := reflector.New(reflector.Options[*corev1.Pod]{ListerWatcher: lw, Store: fifo})
//	go r.Run(ctx) // until ctx ends
//
// # The protocol
//
// Run is a loop over three phases (in the source: the phase type and the
// step function, one per phase):
//
//   - listing: LIST in pages of PageSize, then one Replace with the whole
//     list; or, into a [PartStore] (the informer's), each page and each
//     part of a page handed over as it arrives, then FinishReplace. A
//     continue token that expires (410) restarts the list; after
//     Tuning.ExpiredContinueLimit expiries, unpaged; after a token that
//     comes round again (a list that would never end), unpaged after the
//     backoff.
//   - watching: WATCH from the last resourceVersion, with bookmarks and a
//     randomised server-side timeout. Every event and bookmark advances
//     LastSyncResourceVersion. When the watch ends (timeout, cut
//     connection) the next one starts from there: nothing was missed, so
//     there is no relist.
//   - streaming (Tuning.StreamingList): the list arrives over one WATCH
//     (sendInitialEvents=true) ending in a bookmark, then one Replace (a
//     PartStore gets the initial events in parts as they arrive, and
//     FinishReplace at the bookmark), and that watch carries on. A server
//     that refuses it gets LIST instead; a stream cut before its bookmark
//     streams again.
//
// The reflector lists again only when it cannot go on from where it is:
// the server says its resourceVersion is unusable (410 Gone: compacted
// away; "Too large resource version": a restarted server not caught up),
// an event's resourceVersion goes backwards, or a list itself failed or
// lost its continue token (docs/03 tabulates every cause). The relist is
// always a consistent read (resourceVersion ""), never at the old
// resourceVersion, so it cannot loop on "too old" (kubernetes#133810). A
// watch that merely ended is watched again from where it was: no relist.
//
// The first list's resourceVersion is a choice (Tuning.InitialList): ""
// by default, a consistent read that honours the page size; or "0", the
// server's cache as it is, cheaper but possibly stale and unpaged.
//
// # Failures and retries
//
// Every failure (an error answer, a network error, a garbled response, a
// watch that closes within ShortWatch of opening without moving the
// resourceVersion, an event whose resourceVersion goes backwards) is
// reported to
// Options.OnError as an *Error and retried after an exponential backoff
// with jitter (800ms doubling to 30s by default; Tuning has every knob),
// which resets after two calm minutes. A 403 (RBAC) or a 404 (a missing
// CRD) is retried at that pace until it goes away, with one exception: a
// 404 for a resource that the server's discovery no longer lists, when
// Options.Served is set to ask it (a sharedinformer.Factory sets it) and
// it says so twice, BackoffInitial apart (one look can catch a CRD
// between two versions). That is reported once as ErrNotServed, the store is
// emptied, and no request
// is made until discovery lists the resource again; or, when discovery
// lists the resource in another version only, as a *VersionNotServedError,
// and the store is kept as it was, unwatched (moving a version deletes
// nothing; changes since are not in it). A server's Retry-After
// is the minimum wait. One exception: the first relist after a 410 is
// immediate, since the server answered; a 410 again before a watch has
// worked waits like any failure. A streaming list the server refuses
// (a 4xx other than 429 and 410, which stream again after the backoff)
// is not a failure: the reflector lists instead for the rest of Run, at
// once, and traces the fallback rather than reporting it.
//
// Who retries: client-go's rest package retries a request by itself (up
// to 10 times, sleeping in between) when the server answers 429 or 5xx
// with Retry-After. [RESTListerWatcher] turns that off (MaxRetries(0)), so
// the reflector's backoff is the one retry policy: each attempt is one
// request, each failure is seen and traced, and the request rate in a
// long outage is the backoff's, not the backoff's times eleven. rest's
// QPS/Burst limiter still applies to LIST (it does not limit watches).
//
// Bad data never panics: an object of the wrong type, a typed nil, a list
// of the wrong kind or an ERROR event without a Status is reported with
// ErrUnexpectedObject; a bad watch event is skipped, a bad list retried,
// and an ERROR event without a Status ends its watch, opened again from
// the same resourceVersion after the backoff
// (TestAnErrorEventWithoutAStatusEndsItsWatchWhichIsOpenedAgain).
// With Options.Served, an object of another type (a bookmark too: the
// API server stamps one with the kind the resource holds), or of a kind
// the client's scheme does not know, listed, streamed or watched (not one
// with a fault of its own, nor a watch cut mid-read:
// TestAListedItemWithAFaultOfItsOwnDoesNotAskServed,
// TestAListedItemOfAnotherKindThatDoesNotDecodeAsksServed), asks it first whether
// the resource now holds another kind (Serving.OtherKind), which is
// handled as a resource not served; if it says served, a watch ends and
// relists (cause other-kind), and the list asks again.
//
// # Encodings
//
// A [RESTListerWatcher] reads JSON by default; Source.Protobuf asks for
// protobuf (built-in types and the metadata-only form), and Source.CBOR
// for CBOR (unstructured objects, of a custom resource or a built-in one;
// a typed ListerWatcher refuses it, so a custom resource's own Go type
// reads JSON; KEP-4222).
// Either asks with an Accept header that names JSON as the fallback, and a
// LIST answer is decoded by what it is, told by its first bytes, so a
// server that cannot speak the encoding asked for is read in JSON, never
// refused. kube-apiserver serves CBOR only with its CBORServingAndStorage
// feature gate on (alpha, off by default in 1.37): a LIST in
// application/cbor, a WATCH in application/cbor-seq
// (TestACBORCacheEqualsTheServerThroughEventsAndARelistWithTheGateOn,
// TestACBORSourceReadsJSONWithoutFailingWithTheGateOff). Every LIST
// answer is read in parts as it arrives, whatever its encoding. An item
// that names no type of its own (a built-in resource's) is read as of the
// version the request named. A JSON list names its version before its
// items; one that names another fails before any item is handed over,
// and one that names none by then is held whole until it does
// (TestAJSONListNamingAnotherAPIVersionBeforeItsItemsAndItsKindAfterHandsNoItemOver,
// TestAJSONListNamingAnotherAPIVersionAfterItsItemsHandsNoItemOverAsInTheVersionAsked,
// TestAJSONListNamingItsTypeOnlyAfterItsItemsHandsNoItemOverBeforeItsVersionIsChecked).
// A CBOR list names it after its items (apimachinery writes shorter keys
// first), so its items are handed over as they come, and a list the
// server answered in another version than asked fails at its end with
// those parts already queued (kube-apiserver answers in the version
// asked). A
// ListerWatcher's name says what it asks ("widgets.example.com, offers
// CBOR (unstructured)"); the KindList trace event says what came ("page
// 1: 2 objects in JSON ...";
// TestTheListTraceEventSaysWhichEncodingTheServerAnswered).
//
// # Why ListerWatcher has this shape
//
// List returns one page as the items and the list's metav1.ListMeta (its
// resourceVersion and continue token): the two halves of every Kubernetes
// list, in apimachinery's own types. So a ListerWatcher need not import
// this package to implement it; memlistwatch does not.
//
// Watch returns apimachinery's watch.Interface, not a channel of T, because
// a watch stream mixes two payloads: objects (ADDED, MODIFIED, DELETED,
// BOOKMARK) and a *metav1.Status (ERROR). A typed channel would force each
// ListerWatcher to decide what to do with a Status or a stray object;
// the untyped stream leaves that one decision where the protocol lives, in
// the reflector, which checks the event type before asserting T. It is
// also what rest.Request.Watch returns, so nothing sits in between.
//
// # Invariants
//
//   - One goroutine (Run's) calls the Store, in the order the server
//     reported the changes; resync ticks are handled on it too
//     (TestTheStoreIsCalledFromRunsGoroutineInTheServersOrder).
//   - Replace receives only complete lists: a list that fails half-way
//     never reaches it. A PartStore gets each page, or each part of a
//     PartLister's page, as it arrives, but FinishReplace only for a
//     complete list; a list cut short is begun again, so the store never
//     derives a deletion from it. Proved by
//     TestContinueTokenExpiryRestartsTheListFromTheFirstPage,
//     TestAPartStoreGetsEveryPageAsItArrives,
//     TestAPartStoreGetsEachPartOfAPartListersPageAsItArrives and
//     TestAListCutShortIsBegunAgainAndNeverFinished.
//   - LastSyncResourceVersion is the resourceVersion handed to the store
//     last, where the next watch starts (a queueing store may not have
//     applied it yet); it is safe to read from any goroutine. Proved by
//     TestTheStoreIsCalledFromRunsGoroutineInTheServersOrder (what it
//     is) and, with -race, by
//     TestWatchEndingNormallyResumesFromTheLastResourceVersionWithoutRelist
//     (read while Run writes it).
//   - Run returns after ctx ends, with its watches stopped and no
//     goroutine of its own left (TestRunLeavesNoGoroutineBehind,
//     TestNoGoroutineOutlivesRunAgainstTheRealServer).
//
// # Tracing
//
// With Options.Trace set, every step emits an [informer.TraceEvent] with
// Stage [informer.StageReflector]: KindList, KindReplace, KindWatch,
// KindWatchEvent, KindBookmark, KindWatchEnd, KindRelist (with its reason),
// KindFallback, KindResourceVersion (every change), KindResync, KindError,
// KindBackoff, and, with Options.Served, KindNotServed,
// KindVersionNotServed and KindServedAgain. With no hook no event is
// built.
//
// # Glossary (this package → client-go tools/cache)
//
//	Reflector.Run              Reflector.Run / RunWithContext (its loop: ListAndWatchWithContext)
//	ListerWatcher[T]           ListerWatcher (listwatch.go)
//	Store[T]                   ReflectorStore (reflector.go), the subset of Store it writes
//	PartStore[T], PartLister[T] none: client-go hands its store whole lists
//	RoomWaiter, Tuning.HoldBack none: nothing holds client-go's list back
//	Tuning.StreamingList      the WatchListClient feature (watchList)
//	Options.OnError            WatchErrorHandler
//	Tuning.InitialList        relistResourceVersion's "0" for the first list
//	ErrShortWatch              VeryShortWatchError
//	Source.CBOR                rest's Accept with application/cbor, under client-go's ClientsAllowCBOR gate
package reflector
