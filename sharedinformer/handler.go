package sharedinformer

import "github.com/listwatch/informer"

// Handler receives an informer's notifications, one at a time, on a
// goroutine of its own (see Informer.AddEventHandler).
//
// A handler should be quick: the usual one only computes a key and adds
// it to a workqueue, and the real work happens in workers (pitfall 5). It
// must not modify the objects it is given: they are the cache's own
// (pitfall 2), or, for a delete the watch reported, the object's final
// state, which every handler is given too.
type Handler[T informer.Object] interface {
	// OnAdd: obj is new to this handler. isInInitialList is true while the
	// handler is receiving the cache's content as of its registration
	// (the first LIST, or the replay a late handler gets), false for
	// objects created later.
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate: obj changed from oldObj to newObj. On a resync, oldObj and
	// newObj are the same object: nothing changed, you are being reminded.
	OnUpdate(oldObj, newObj T)
	// OnDelete: obj is gone. If finalStateUnknown is true, the deletion
	// was inferred, not seen: from a relist (the watch missed it), or
	// from discovery no longer serving the resource, which empties the
	// cache (TestAResourceGoneDeletesWithFinalStateUnknownWithoutARelist);
	// obj is then the last state the cache had, not the state at
	// deletion.
	OnDelete(obj T, finalStateUnknown bool)
}

// HandlerFuncs adapts plain functions to a Handler. A nil function skips
// that notification.
type HandlerFuncs[T informer.Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd calls AddFunc, if set.
func (h HandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc, if set.
func (h HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc, if set.
func (h HandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, finalStateUnknown)
	}
}

// notification is one call to make on a Handler.
type notification[T informer.Object] struct {
	kind notificationKind
	// old is set for updates only; obj is the new, added or deleted object.
	old, obj T
	// flag is isInInitialList for adds and finalStateUnknown for deletes.
	flag bool
}

type notificationKind uint8

const (
	addNotification notificationKind = iota + 1
	updateNotification
	deleteNotification
)

func (k notificationKind) String() string {
	switch k {
	case addNotification:
		return "add"
	case updateNotification:
		return "update"
	case deleteNotification:
		return "delete"
	}
	return "unknown"
}

// deliver calls the Handler method n stands for.
func (n notification[T]) deliver(h Handler[T]) {
	switch n.kind {
	case addNotification:
		h.OnAdd(n.obj, n.flag)
	case updateNotification:
		h.OnUpdate(n.old, n.obj)
	case deleteNotification:
		h.OnDelete(n.obj, n.flag)
	}
}

// String describes n for traces: "add (initial list)", "update", ...
func (n notification[T]) String() string {
	switch {
	case n.kind == addNotification && n.flag:
		return "add (initial list)"
	case n.kind == deleteNotification && n.flag:
		return "delete (final state unknown)"
	}
	return n.kind.String()
}
