package reflector

import (
	"context"

	"github.com/listwatch/informer"
)

// listSink is where one list's objects go as they arrive: straight into a
// PartStore, part by part, or gathered for one Replace into any other
// Store.
type listSink[T informer.Object] struct {
	ctx   context.Context // the list's: holding back waits within it
	store Store[T]
	parts PartStore[T] // nil: gather for Replace
	all   []T          // the gathered objects, for Replace
	// listed counts the objects handed over so far.
	listed int
	// err is the store's refusal of a part; the list stops at it.
	err error
	// hold lets a slow consumer hold the list back (see holdBack).
	hold holdBack
}

func (r *Reflector[T]) newListSink(ctx context.Context) *listSink[T] {
	parts, _ := r.store.(PartStore[T])
	return &listSink[T]{ctx: ctx, store: r.store, parts: parts, hold: newHoldBack(r.store, r.opts.HoldBack)}
}

// begin starts a replacement in a PartStore.
func (s *listSink[T]) begin() error {
	if s.parts == nil {
		return nil
	}
	return s.parts.BeginReplace()
}

// part takes some objects of the list, in list order.
func (s *listSink[T]) part(objs []T) error {
	s.listed += len(objs)
	if s.parts == nil {
		s.all = append(s.all, objs...)
		return nil
	}
	if err := s.hold.wait(s.ctx); err != nil {
		s.err = err
		return err
	}
	if err := s.parts.ReplacePart(objs); err != nil {
		s.err = err
		return err
	}
	return nil
}

// finish hands over the end of the list, at resourceVersion rv.
func (s *listSink[T]) finish(rv string) error {
	if s.parts == nil {
		return s.store.Replace(s.all, rv)
	}
	return s.parts.FinishReplace(rv)
}
