package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/listwatch/informer"
)

// ErrInformerReleased is why the handlers of an informer stopped when its
// last holder released it: their Registration.Err returns it.
var ErrInformerReleased = errors.New("sharedinformer: the informer's last holder released it")

// held is one informer a Factory hands out, with its holders.
//
// Its life: InformerFor makes it (1 holder) or counts one more holder;
// Start runs it under a context of its own (stop cancels it); Release
// counts one holder fewer, and at 0 the informer leaves the factory's
// map, is stopped, and done closes once its Run has returned.
type held struct {
	inf     runnable
	holders int                     // InformerFor calls not yet given back by Release; guarded by Factory.mu
	stop    context.CancelCauseFunc // set by Start; nil until then; guarded by Factory.mu
	done    chan struct{}           // closed once the informer has stopped for good
}

// Release gives back one hold on inf, taken by one InformerFor. While
// others hold it, nothing changes. When the last holder gives it back, the
// informer stops: its reflector's requests end, its handlers' goroutines
// end (each Registration's Stopped closes, and its Err is
// ErrInformerReleased), and its metrics' names are given back. Release
// then waits until all that is done, or ctx ends (the informer still
// stops, in the background). Called from a handler (of this informer or
// any other), it does not wait: the informer stops only once the
// handler's call in progress returns, which would be never if that call
// waited for it. It returns nil at once, and the informer stops when the
// handler returns (its Registrations' Stopped close then).
//
// Nobody may use a released informer afterwards: asking InformerFor for
// the same informer again makes a fresh one, which lists from scratch. An
// informer that Start never ran just ends. A released informer will
// never sync, so sync waits no longer wait for it or its handlers, from
// the moment Release is called (see WaitForCacheSync).
//
// It fails if inf is not held from f: not made by f, or released by its
// last holder already.
func Release[T informer.Object](ctx context.Context, f *Factory, inf *Informer[T]) error {
	if f == nil || inf == nil {
		return errors.New("sharedinformer: Release: the factory or the informer is nil")
	}
	f.mu.Lock()
	var key factoryKey
	var h *held
	for k, candidate := range f.informers {
		if candidate.inf == runnable(inf) {
			key, h = k, candidate
		}
	}
	if h == nil {
		f.mu.Unlock()
		return fmt.Errorf("sharedinformer: Release: the informer of %s is not held from this factory (released by its last holder already?)", inf.Name())
	}
	if h.holders--; h.holders > 0 {
		f.mu.Unlock()
		return nil
	}
	delete(f.informers, key)
	inf.markReleased() // sync waits stop waiting for it now, not once it has stopped
	if h.stop == nil { // never started: end it now, before its name can be asked for again
		inf.endUnrun(ErrInformerReleased)
		close(h.done)
		f.mu.Unlock()
		return nil
	}
	select {
	case <-h.done: // it stopped already, with the ctx given to Start
		f.mu.Unlock()
		return nil
	default:
	}
	f.stopping[key] = h
	h.stop(ErrInformerReleased)
	f.mu.Unlock()
	if inHandler() {
		return nil // waiting here would wait for this very call to return
	}
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sharedinformer: Release: the informer of %s is stopping but has not stopped yet: %w", inf.Name(), ctx.Err())
	}
}

// lockOnceStopped locks f.mu once no released informer of key is still
// stopping, so that its successor may take its name; or returns ctx's
// error, unlocked.
func (f *Factory) lockOnceStopped(ctx context.Context, key factoryKey) error {
	for {
		f.mu.Lock()
		h, ok := f.stopping[key]
		if !ok {
			return nil
		}
		f.mu.Unlock()
		select {
		case <-h.done:
		case <-ctx.Done():
			return fmt.Errorf("sharedinformer: InformerFor: waiting for the released informer of the same scope to stop: %w", ctx.Err())
		}
	}
}

// stopped records that h's Run has returned, after Start ran it.
func (f *Factory) stopped(key factoryKey, h *held) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping[key] == h {
		delete(f.stopping, key)
	}
	close(h.done)
}

// listenerDeliver is how the call stack names a listener's deliver, which
// calls a handler: "<this package>.(*listener[...]).deliver".
var listenerDeliver = struct{ prefix, suffix string }{
	prefix: reflect.TypeFor[Factory]().PkgPath() + ".(*listener[",
	suffix: "]).deliver",
}

// inHandler reports whether the calling goroutine is a listener's, inside
// a call of its handler. Go gives a goroutine no identity to compare, so
// it reads the call stack, the one place that says so. Cost: a walk of
// the stack, microseconds; Release is rare.
func inHandler() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs)) // a deep stack: look at all of it
	}
	frames := runtime.CallersFrames(pcs)
	for {
		frame, more := frames.Next()
		if strings.HasPrefix(frame.Function, listenerDeliver.prefix) && strings.HasSuffix(frame.Function, listenerDeliver.suffix) {
			return true
		}
		if !more {
			return false
		}
	}
}
