package deltafifo

import "github.com/listwatch/informer"

// The Kind values of the trace events a DeltaFIFO emits, all with Stage
// [informer.StageFIFO].
const (
	// KindQueued: a delta was appended to a key's deltas. Detail is its
	// type, e.g. "Updated" or "Deleted (final state unknown)".
	KindQueued = "queued"
	// KindCoalesced: a delete right after a delete merged into it.
	KindCoalesced = "coalesced"
	// KindIgnored: a delete for a key that is neither queued nor known.
	KindIgnored = "ignored"
	// KindTombstoned: Replace found a known or queued key missing from the
	// list, or Empty deletes it; a KindQueued event for its Deleted delta
	// follows, or KindCoalesced when the key's queued deltas end in a
	// delete already, which the tombstone merges into.
	KindTombstoned = "tombstoned"
	// KindReplaced: a Replace finished. Detail has its counts.
	KindReplaced = "replaced"
	// KindResync: a Resync finished. Detail has how many keys it replayed.
	KindResync = "resync"
	// KindPopped: Pop handed a key's deltas to the process function.
	KindPopped = "popped"
	// KindProcessed: the process function returned for the key popped
	// just before. ResourceVersion is the applied resourceVersion after it
	// (AppliedResourceVersion); Detail is its error, if any. The time
	// from KindPopped to KindProcessed is the informer's processing
	// latency.
	KindProcessed = "processed"
	// KindRequeued: the process function asked for the deltas back.
	KindRequeued = "requeued"
	// KindBookmarked: Bookmark recorded a resourceVersion with nothing to
	// queue; it is applied once everything queued before it is.
	KindBookmarked = "bookmarked"
)

// emit sends one event to the trace hook, if there is one.
func (f *DeltaFIFO[T]) emit(kind string, key informer.Key, rv, detail string) {
	if f.trace == nil {
		return
	}
	e := informer.TraceEvent{Stage: informer.StageFIFO, Kind: kind, ResourceVersion: rv, Detail: detail}
	if key.Name != "" {
		e.Key = key.String()
	}
	f.trace.Emit(e)
}

// describe names a delta for traces.
func describe[T informer.Object](d Delta[T]) string {
	if d.FinalStateUnknown {
		return string(d.Type) + " (final state unknown)"
	}
	return string(d.Type)
}
