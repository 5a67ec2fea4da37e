package sharedinformer

import (
	"context"
	"fmt"
)

// lookupTurn lets one InformerFor at a time use the factory's RESTMapper
// (and the discovery cache behind it), and lets every other one wait for
// its turn within its own context.
//
// Why not leave that to the mapper's own lock: the factory's
// keepingMapper, as client-go's DeferredDiscoveryRESTMapper, and the
// memory cache under it, hold a mutex for the whole discovery fetch of
// the caller that fills them,
// with that caller's context. A second caller waits on the mutex, where
// its context cannot reach it, for as long as a stalled server lets the
// fetch hang (client-go's discovery timeout is 32 s a request when the
// rest.Config sets none). Waiting here instead, it returns when its
// context ends, as InformerFor promises
// (TestAnInformerForWaitingForAnotherOnesHangingDiscoveryReturnsWhenItsContextEnds).
//
// The turn is held only around mapper lookups, never while waiting for
// an informer, so it cannot be held by a goroutine that waits for the
// caller.
type lookupTurn chan struct{}

func newLookupTurn() lookupTurn { return make(lookupTurn, 1) }

// take waits for the turn until ctx ends. On nil the caller holds the
// turn and must give it back.
func (t lookupTurn) take(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sharedinformer: looking up the resource: %w", err)
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sharedinformer: waiting for another InformerFor's discovery lookup: %w", ctx.Err())
	}
}

// give hands the turn back.
func (t lookupTurn) give() { <-t }
