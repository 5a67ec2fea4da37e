package sharedinformer

import (
	"maps"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer"
)

// Predicate decides which notifications reach a handler (controller-
// runtime's predicates, client-go's FilteringResourceEventHandler). Each
// function says whether to pass that kind of notification; a nil one
// passes everything. Filter with Filtered.
//
// A filter saves work only; it must never hide what the reconcile needs
// to hear. Dropping a delete is the dangerous case: a controller that
// never hears its object go away never deletes what it made for it (a
// child is stranded). The predicates here pass every delete for that
// reason. An object a relist finds deleted and made again under its name
// comes as a delete and an add, never as an update between two objects
// that GenerationChanged could drop
// (TestAGenerationChangedHandlerHearsOfAnObjectARelistFoundDeletedAndMadeAgain).
type Predicate[T informer.Object] struct {
	Add    func(obj T) bool
	Update func(oldObj, newObj T) bool
	Delete func(obj T) bool
}

// Filtered returns a handler that passes a notification to h only if
// every predicate passes it. A nil h gives a nil Handler, which
// AddEventHandler rejects.
func Filtered[T informer.Object](h Handler[T], predicates ...Predicate[T]) Handler[T] {
	if h == nil {
		return nil
	}
	return HandlerFuncs[T]{
		AddFunc: func(obj T, initial bool) {
			for _, p := range predicates {
				if p.Add != nil && !p.Add(obj) {
					return
				}
			}
			h.OnAdd(obj, initial)
		},
		UpdateFunc: func(oldObj, newObj T) {
			for _, p := range predicates {
				if p.Update != nil && !p.Update(oldObj, newObj) {
					return
				}
			}
			h.OnUpdate(oldObj, newObj)
		},
		DeleteFunc: func(obj T, unknown bool) {
			for _, p := range predicates {
				if p.Delete != nil && !p.Delete(obj) {
					return
				}
			}
			h.OnDelete(obj, unknown)
		},
	}
}

// GenerationChanged passes an update only when metadata.generation moved:
// a change to the spec, not to the status or metadata. Safe for resources
// whose server bumps the generation on spec changes (Deployments, most
// CRDs with a status subresource); wrong for those it never bumps
// (ConfigMaps, Secrets: every update would be dropped). It also drops
// resyncs, whose old and new objects are the same.
func GenerationChanged[T informer.Object]() Predicate[T] {
	return Predicate[T]{Update: func(oldObj, newObj T) bool {
		return oldObj.GetGeneration() != newObj.GetGeneration()
	}}
}

// LabelsChanged passes an update only when the labels changed. It drops
// resyncs too.
func LabelsChanged[T informer.Object]() Predicate[T] {
	return Predicate[T]{Update: func(oldObj, newObj T) bool {
		return !maps.Equal(oldObj.GetLabels(), newObj.GetLabels())
	}}
}

// MatchingLabels passes what selector matches: an add of a matching
// object, an update where the old or the new object matches (so an object
// whose labels no longer match is still heard of, once, and its reconcile
// can let go of it), and every delete. To have the server filter instead,
// and cache only the matching objects, use the informer's WithLabels. A
// nil selector matches nothing (labels.Nothing), as an empty one matches
// everything.
func MatchingLabels[T informer.Object](selector labels.Selector) Predicate[T] {
	if selector == nil {
		selector = labels.Nothing()
	}
	matches := func(obj T) bool { return selector.Matches(labels.Set(obj.GetLabels())) }
	return Predicate[T]{
		Add:    matches,
		Update: func(oldObj, newObj T) bool { return matches(oldObj) || matches(newObj) },
	}
}
