package reflector

import (
	"context"
	"errors"
	"time"
)

// holdBack lets a slow consumer hold a list back, within limits. Before
// each part of a list it waits for the store to have room (RoomWaiter),
// so that the parts do not pile up beside the cache; but one request
// waits at most Tuning.HoldBack in all, and past that hands the rest
// over regardless, because a request not read in time is ended by the
// server (or the client's Timeout) and a list that always fails never
// finishes. Memory is the lesser risk.
type holdBack struct {
	room     RoomWaiter    // nil: the store cannot say; never wait
	patience time.Duration // per request; negative: never wait
	waited   time.Duration // this request's waiting so far
}

func newHoldBack(store any, patience time.Duration) holdBack {
	room, _ := store.(RoomWaiter)
	return holdBack{room: room, patience: patience}
}

// newRequest starts the count of a new request's waiting.
func (h *holdBack) newRequest() { h.waited = 0 }

// wait waits for room, for what is left of the request's patience. It
// returns an error only when ctx ends or the store refuses to wait (it
// is closed); running out of patience is not one.
func (h *holdBack) wait(ctx context.Context) error {
	left := h.patience - h.waited
	if h.room == nil || left <= 0 {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	start := time.Now()
	err := h.room.WaitForRoom(waitCtx)
	h.waited += time.Since(start)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil // out of patience: hand the rest over
	}
	return err
}
