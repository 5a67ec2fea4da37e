package sharedinformer

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// describe reports whether discovery lists gvr in its group version now
// and, if it does, its kind and whether it is namespaced: an answer no older than
// servedAnswerAge, shared with the served checks, or, if fresh, one
// asked now (and kept for others). A 404 lists nothing;
// any other failure to ask is an error. InformerFor judges by it what
// the RESTMapper remembers, which may be a CRD deleted since, or created
// again with another scope.
//
// It never waits for the turn: a check holding it may be waiting on a
// request that hangs, and an InformerFor must not wait on an informer's
// check, nor the checks on an InformerFor's request (bounded only by its
// caller's context). It takes a stored answer if the turn is free, else
// asks on its own, and keeps its answer for others if the turn is free
// then.
func (s *servedResources) describe(ctx context.Context, gvr schema.GroupVersionResource, fresh bool) (r listedResource, listed bool, err error) {
	gv := gvr.GroupVersion()
	var a servedAnswer
	ok := false
	if !fresh {
		a, ok = s.tryStored(gv)
	}
	if !ok {
		a = s.ask(ctx, gv)
		if err := ctx.Err(); err != nil {
			return listedResource{}, false, err // says nothing about the server
		}
		s.tryKeep(gv, a)
	}
	if err := a.failed(); err != nil {
		return listedResource{}, false, err
	}
	r, listed = a.resources[gvr.Resource]
	return r, listed, nil
}

// tryStored returns the stored answer for gv if the turn is free and the
// answer no older than servedAnswerAge.
func (s *servedResources) tryStored(gv schema.GroupVersion) (servedAnswer, bool) {
	if !s.tryTurn() {
		return servedAnswer{}, false
	}
	defer s.giveTurn()
	a, ok := s.answers[gv]
	return a, ok && time.Since(a.at) <= servedAnswerAge
}

// tryKeep stores a, asked outside the turn, for gv if the turn is free
// and no answer asked later is stored, and forgets old answers as the
// served checks do (describe's would grow the maps too). The checks
// judge answers by the order they were asked in (seq), so one stored
// late is taken only where it is as fresh as they want: never by a look,
// which takes only answers it asked after its list of groups.
func (s *servedResources) tryKeep(gv schema.GroupVersion, a servedAnswer) {
	if !s.tryTurn() {
		return
	}
	defer s.giveTurn()
	s.forgetOldLocked()
	if old, ok := s.answers[gv]; !ok || old.seq < a.seq {
		s.answers[gv] = a
	}
}

// tryTurn takes the turn if it is free, without waiting; the caller
// gives it back with giveTurn.
func (s *servedResources) tryTurn() bool {
	select {
	case s.turn <- struct{}{}:
		return true
	default:
		return false
	}
}
