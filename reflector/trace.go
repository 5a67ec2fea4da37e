package reflector

import (
	"fmt"

	"github.com/listwatch/informer"
)

// The Kind values of the trace events a Reflector emits, all with Stage
// [informer.StageReflector]. Follow one object with KindWatchEvent, the
// protocol with KindList, KindWatch and KindRelist, and progress with
// KindResourceVersion. The same words name the step in an [Error]'s Op.
const (
	// KindList: one LIST request was answered with a page. ResourceVersion
	// is the list's; Detail says what was asked and what came, such as
	// `page 1: 500 objects, more follow (asked resourceVersion="", limit=500)`;
	// from a RESTListerWatcher, also the encoding the server answered in,
	// which may differ from what its name says was asked: `page 1: 500
	// objects in JSON, ...` for an informer that offers CBOR to a server
	// without the CBORServingAndStorage gate
	// (TestTheListTraceEventSaysWhichEncodingTheServerAnswered).
	KindList = "list"
	// KindReplace: a whole list was handed to the store: its Replace, or a
	// PartStore's FinishReplace after the parts.
	// ResourceVersion is the list's; Detail counts the objects.
	KindReplace = "replace"
	// KindWatch: a WATCH was opened. ResourceVersion is where it starts;
	// Detail is "streaming list" for a WATCH that sends the initial list.
	KindWatch = "watch"
	// KindWatchEvent: an ADDED, MODIFIED or DELETED event went to the store.
	// Key and ResourceVersion are the object's; Detail is the event type.
	KindWatchEvent = "watch-event"
	// KindBookmark: a BOOKMARK event: the server says the collection is at
	// ResourceVersion, with no object changed. Detail is "initial events
	// end" for the bookmark that ends a streaming list.
	KindBookmark = "bookmark"
	// KindWatchEnd: a watch ended normally, without an error event (the
	// server's timeout, a cut connection). Detail counts the events it
	// delivered. A watch that ends within ShortWatch without moving the
	// resourceVersion is a failure instead, traced as KindError
	// (ErrShortWatch).
	KindWatchEnd = "watch-end"
	// KindRelist: the reflector lists again. Reason is its cause (one of
	// the Cause constants); Detail says why for people: a 410 Gone, an
	// expired continue token, a retry after a failed list, ...
	KindRelist = "relist"
	// KindFallback: the reflector stops streaming and uses LIST for the
	// rest of Run: the server refused a streaming list (Detail is its
	// answer), or Tuning.StreamEndedLimit streaming lists in a row ended
	// before their bookmark, or one brought a DELETED among its initial
	// events (Detail says which;
	// TestStreamingListFallsBackToListAgainstAServerThatRefusesIt).
	KindFallback = "fallback"
	// KindResourceVersion: LastSyncResourceVersion changed to
	// ResourceVersion. Detail is the previous value.
	KindResourceVersion = "rv"
	// KindResync: the store's Resync was called (no API call).
	KindResync = "resync"
	// KindError: a step failed; Detail is the error, the same one
	// Options.OnError receives.
	KindError = "error"
	// KindNotServed: a 404, or objects that are not T's, and discovery
	// lists the resource in no version, or cluster-scoped while the
	// reflector reads one namespace, or holding another kind (Detail says
	// which; TestAStreamedRelistOfObjectsOfAnotherTypeAsksServedAgain):
	// the reflector empties its store and stops listing and
	// watching until it is served (see Options.Served). ResourceVersion
	// is the last one the reflector had.
	KindNotServed = "not-served"
	// KindVersionNotServed: a 404, or objects that are not T's, and
	// discovery lists the resource in other versions only (Detail names
	// them): the reflector keeps its
	// store as it was (a version move deletes nothing), and stops listing
	// and watching until its version is served again.
	KindVersionNotServed = "version-not-served"
	// KindServedAgain: discovery lists the resource in the reflector's
	// version again after KindNotServed or KindVersionNotServed; a relist
	// with cause CauseServedAgain follows.
	KindServedAgain = "served-again"
	// KindBackoff: the reflector waits before its next request. Detail is
	// the wait.
	KindBackoff = "backoff"
)

// objects counts objects in a trace detail: "1 object", "3 objects".
func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

// emitRelist traces the start of a relist, if why says there is one (the
// first list has no why): its cause as the event's Reason, the sentence
// as its Detail.
func (r *Reflector[T]) emitRelist(why relistWhy) {
	if why.cause == "" || r.trace == nil {
		return
	}
	r.trace.Emit(informer.TraceEvent{Stage: informer.StageReflector, Kind: KindRelist, Detail: why.text, Reason: why.cause})
}

// emit sends one event to the trace hook, if there is one. A caller
// whose detail costs anything to build (a string joined or formatted)
// checks r.trace first, so that with no hook nothing is built
// (TestWithNoTraceHookAResourceVersionChangeBuildsNoDetail).
func (r *Reflector[T]) emit(kind, key, rv, detail string) {
	if r.trace == nil {
		return
	}
	r.trace.Emit(informer.TraceEvent{Stage: informer.StageReflector, Kind: kind, Key: key, ResourceVersion: rv, Detail: detail})
}
