package deltafifo

import "github.com/listwatch/informer"

// DeltaType says what kind of change a Delta records.
type DeltaType string

const (
	// Added: a watch ADDED event, or an Add call.
	Added DeltaType = "Added"
	// Updated: a watch MODIFIED event, or an Update call.
	Updated DeltaType = "Updated"
	// Deleted: the object is gone. If Delta.FinalStateUnknown is set, the
	// deletion was inferred from a relist and Object is the last state this
	// side knew, not the state the object had when it was deleted.
	Deleted DeltaType = "Deleted"
	// Replaced: the object was in a (re)list. The consumer tells an add
	// from an update by looking in its cache: a relist cannot say which.
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync replayed the cached object. Nothing changed
	// on the server; no API call was made.
	Sync DeltaType = "Sync"
)

// Delta is one change to one object.
type Delta[T informer.Object] struct {
	Type   DeltaType
	Object T
	// FinalStateUnknown is set only on a Deleted delta that Replace
	// inferred: the key vanished between two lists, so the watch event
	// that would have carried its final state was missed. Object is the
	// last known state. client-go wraps such objects in a
	// DeletedFinalStateUnknown tombstone type; here it is a field, so no
	// type switch is ever needed.
	FinalStateUnknown bool
	// Resyncs is how many resyncs the DeltaFIFO had begun when it queued
	// this delta (see DeltaFIFO.Resyncs); for a Sync delta, the number of
	// the resync that queued it. A resync skips a key that is already
	// queued, so a consumer whose resyncs overlap (one not yet popped when
	// the next begins) reads it to tell which resyncs a key's pop answers.
	Resyncs uint64
}

// Deltas are the changes queued for one key, oldest first. A popped Deltas
// is never empty.
type Deltas[T informer.Object] []Delta[T]

// Newest returns the most recent delta: the state the consumer should
// converge to. It must not be called on an empty Deltas.
func (d Deltas[T]) Newest() Delta[T] { return d[len(d)-1] }

// Oldest returns the first delta still queued.
func (d Deltas[T]) Oldest() Delta[T] { return d[0] }

// coalesce merges a delete appended right after another delete: an object
// cannot be deleted twice, so the two describe one deletion. The one that
// knows the final state wins; between two that agree, the newer one. The
// merged delete keeps the older's Resyncs, as it keeps its place.
// It reports whether it merged.
func (d Deltas[T]) coalesce() (Deltas[T], bool) {
	n := len(d)
	if n < 2 || d[n-1].Type != Deleted || d[n-2].Type != Deleted {
		return d, false
	}
	older, newer := d[n-2], d[n-1]
	if newer.FinalStateUnknown && !older.FinalStateUnknown {
		newer = older
	}
	newer.Resyncs = older.Resyncs // it takes the older's place: and its number
	d[n-2] = newer
	var zero Delta[T]
	d[n-1] = zero // release the dropped object
	return d[:n-1], true
}
