package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// ListerWatcher is where a reflector reads from: one collection of objects
// of type T on an API server (all ConfigMaps, the Pods of one namespace,
// the Widgets labelled app=web). client-go has the same two calls under the
// same name, with interface{} in place of T (tools/cache/listwatch.go).
//
// The reflector fills in the protocol fields of opts (resourceVersion,
// resourceVersionMatch, limit, continue, timeoutSeconds,
// allowWatchBookmarks, sendInitialEvents); the ListerWatcher adds what
// selects the collection (namespace, label and field selectors). Both calls
// must return when ctx ends.
//
// Every object either call (or a PartLister's ListInParts) hands out must
// be the caller's alone, fresh, as a decoder makes it: the reflector's
// store owns what it is given, and an informer writes into it
// (sharedinformer shares the values cached objects repeat). A
// ListerWatcher that handed one object to two callers, or kept it, would
// share it with a writer. RESTListerWatcher decodes every object anew;
// memlistwatch hands out deep copies
// (TestObjectsReadFromAListOrAWatchAreCopies).
//
// [RESTListerWatcher] talks to kube-apiserver; package memlistwatch is an
// in-memory one for examples and unit tests.
type ListerWatcher[T informer.Object] interface {
	// List returns one page of the collection: its objects, and the list's
	// metadata, whose ResourceVersion is the state the page shows and whose
	// Continue, when not empty, is the token that fetches the next page.
	// An object that is not a valid T is an error, never a panic.
	List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error)
	// Watch opens a stream of changes after opts.ResourceVersion. Its events
	// carry a T (ADDED, MODIFIED, DELETED, BOOKMARK) or a *metav1.Status
	// (ERROR); that is why the stream is apimachinery's untyped
	// watch.Interface and not a channel of T: see the package doc.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Store is what a reflector writes into: the next stage of the informer,
// a DeltaFIFO. A reflector calls it from one goroutine only, in the order
// the server reported the changes; a Store need not expect two calls at
// once from the same reflector.
//
// An error from a Store is reported (Options.OnError) and does not stop
// the reflector; a failed Replace is retried with a fresh list.
type Store[T informer.Object] interface {
	// Add reports an object created (a watch ADDED event).
	Add(obj T) error
	// Update reports an object changed (a watch MODIFIED event).
	Update(obj T) error
	// Delete reports an object deleted (a watch DELETED event); obj is its
	// final state, which the server sent.
	Delete(obj T) error
	// Replace hands over a whole list, after the first list and after every
	// relist, with the list's resourceVersion. Objects the store knows and
	// objs lacks were deleted while the reflector was not watching: the
	// store emits deletions for them whose final state is unknown.
	Replace(objs []T, resourceVersion string) error
	// Resync replays the store's current objects to its consumers, every
	// Options.ResyncPeriod. It makes no API call (pitfall 6).
	Resync() error
	// Bookmark reports that the watch reached resourceVersion with no
	// change (a BOOKMARK event), so that a store which says how far it is
	// in sync can count it once everything before it is applied.
	Bookmark(resourceVersion string) error
}

// PartLister is a ListerWatcher that can hand over the objects of a list
// page in parts while it reads them, before the answer has arrived whole.
// [RESTListerWatcher] is one: it decodes a protobuf answer a batch of
// items at a time. The reflector uses it when its Store is a [PartStore].
type PartLister[T informer.Object] interface {
	// ListInParts is List, except that the objects go to part, in list
	// order, a slice at a time, instead of being returned; the slices are
	// the callee's to keep. An error from part stops the list and is
	// returned as it is.
	ListInParts(ctx context.Context, opts metav1.ListOptions, part func([]T) error) (metav1.ListMeta, error)
}

// PartStore is a Store that can take a list in parts, as its pages or
// parts arrive, so that the old objects and the whole new list never sit
// in memory together (the DeltaFIFO's BeginReplace, ReplacePart and
// FinishReplace). The reflector replaces a PartStore this way, every page
// and every part of a [PartLister]'s page as it arrives; the tombstones for
// keys no part listed come with FinishReplace, once the list is complete.
// A list that fails half-way is begun again: the store must derive no
// deletion from one that did not finish. A list that cannot finish,
// because the resource is no longer served (see Options.Served), ends
// with Empty instead.
type PartStore[T informer.Object] interface {
	BeginReplace() error
	ReplacePart(objs []T) error
	FinishReplace(resourceVersion string) error
	// Empty deletes everything the store holds, the parts of an
	// unfinished list included, each as a deletion whose final state is
	// unknown. It is not a list: a store that has not synced (no list has
	// finished) stays unsynced.
	Empty() error
}

// A RoomWaiter is a PartStore that can say when its consumer has fallen
// behind (the DeltaFIFO's WaitForRoom): WaitForRoom returns nil once the
// store has room for another part, or ctx's error. The reflector calls it
// before each part, for at most Tuning.HoldBack in all per request, so a
// slow consumer holds a list back instead of letting it pile up beside
// the cache, but never long enough to make the request time out.
type RoomWaiter interface {
	WaitForRoom(ctx context.Context) error
}
