package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// ErrInformerReleased is why the handlers of an informer stopped when its
// last holder released it: their Registration.Err returns it.
var ErrInformerReleased = errors.New("sharedinformer: the informer's last holder released it")

// StillStoppingError is InformerFor's answer when it is asked on an
// informer's own goroutine (in a handler, OnError, a trace hook or a
// Transform, of any informer) for a scope whose informer its last holder
// has released and which has not stopped yet. The successor takes the
// released informer's metrics name, so it is made only once the released
// one has stopped; and an informer stops only once every call of yours
// on its goroutines has returned, so waiting there could wait for itself
// (a handler that releases its own informer and asks again would wait
// forever). Ask again from another goroutine, such as the reconcile loop
// or the one that reacts to Registration.Stopped: there InformerFor waits,
// within its ctx, for the released informer to stop.
type StillStoppingError struct {
	Type reflect.Type // the informer's Go type, such as *unstructured.Unstructured
	Name string       // the released informer's Name, which its successor takes
}

// Error says what was asked, why it was not made and where to ask.
func (e *StillStoppingError) Error() string {
	return fmt.Sprintf("sharedinformer: InformerFor: the informer of %s (%v) was asked for from an informer's own goroutine (a handler, OnError, a hook) while the released informer of the same scope is still stopping, and it stops only once that call returns; ask from another goroutine, such as the reconcile loop",
		e.Name, e.Type)
}

// held is one informer a Factory hands out, with its holders.
//
// Its life: InformerFor makes it (1 holder) or counts one more holder;
// Start runs it under a context of its own (stop cancels it); Release
// counts one holder fewer, and at 0 the informer leaves the factory's
// map, is stopped, and done closes once its Run has returned. If the ctx
// given to Start ends first, it stops with it, and the factory's next
// Start, InformerFor or WaitForCacheSync retires it (retireEndedLocked):
// it leaves the map, and Release of it only waits for it to stop.
type held struct {
	inf     runnable
	holders int                     // InformerFor calls not yet given back by Release; guarded by Factory.mu
	stop    context.CancelCauseFunc // set by Start; nil until then; guarded by Factory.mu
	ctx     context.Context         // what Start runs it under (stop cancels it); nil until then; guarded by Factory.mu
	done    chan struct{}           // closed once the informer has stopped for good
}

// ended reports whether h's Run context has ended while h is still held:
// the ctx given to Start ended (a release takes h out of the map first).
// Such an informer will never follow the server again. Call with
// Factory.mu held.
func (h *held) ended() bool { return h.ctx != nil && h.ctx.Err() != nil }

// Release gives back one hold on inf, taken by one InformerFor. While
// others hold it, nothing changes. When the last holder gives it back, the
// informer stops: its reflector's requests end, its handlers' goroutines
// end (each Registration's Stopped closes, and its Err is
// ErrInformerReleased), and its metrics' names are given back. Release
// then waits until all that is done, or ctx ends (the informer still
// stops, in the background). Called from an informer's own goroutine —
// a handler, OnError, a trace hook, a Transform, of this informer or any
// other — it does not wait: the informer stops only once that call
// returns, which would be never if the call waited for it. It returns
// nil at once, and the informer stops when the call returns (its
// Registrations' Stopped close then). A call that hands Release to
// another goroutine and waits for it still waits for itself: don't.
//
// Nobody may use a released informer afterwards: asking InformerFor for
// the same informer again makes a fresh one, which lists from scratch,
// once the released one has stopped (it waits for that, within its ctx).
// So a handler that releases its own informer cannot ask for the fresh
// one there: InformerFor on an informer's own goroutine returns a
// *StillStoppingError at once while the released one stops. Ask from
// another goroutine, such as the reconcile loop. An informer that Start
// never ran just ends. A released informer will never sync, so sync
// waits no longer wait for it or its handlers, from the moment Release
// is called (see WaitForCacheSync).
//
// It fails if inf is not held from f: not made by f, or released by its
// last holder already. An informer that stopped with the ctx given to
// Start, and that the factory has retired since (see InformerFor), has
// nothing left to give back: Release of it returns nil once it has
// stopped.
func Release[T informer.Object](ctx context.Context, f *Factory, inf *Informer[T]) error {
	if f == nil || inf == nil {
		return errors.New("sharedinformer: Release: the factory or the informer is nil")
	}
	f.mu.Lock()
	f.retireEndedLocked() // one whose Start ctx ended is released already (TestAFactoryWaitAfterATermReleasedItsStoppedInformerIsAnError)
	var key factoryKey
	var h *held
	for k, candidate := range f.informers {
		if candidate.inf == runnable(inf) {
			key, h = k, candidate
		}
	}
	if h == nil && inf.retiredBy() == f {
		// It stopped, or is stopping, with the ctx given to Start: nothing
		// to give back, but the last holder waits for the stop, as for a
		// release (TestTheLastReleaseOfAnInformerRetiredWhileStillStoppingWaitsForItToStop).
		for _, stopping := range f.stopping {
			if stopping.inf == runnable(inf) {
				h = stopping
			}
		}
		f.mu.Unlock()
		if h == nil || onInformerGoroutine() {
			return nil // stopped already; or waiting here would wait for this very call
		}
		return waitStopped(ctx, inf.Name(), h)
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
	if onInformerGoroutine() {
		return nil // waiting here would wait for this very call to return
	}
	return waitStopped(ctx, inf.Name(), h)
}

// waitStopped waits until h's informer, named name, has stopped, or ctx
// ends (the informer still stops, in the background).
func waitStopped(ctx context.Context, name string, h *held) error {
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sharedinformer: Release: the informer of %s is stopping but has not stopped yet: %w", name, ctx.Err())
	}
}

// lockOnceStopped locks f.mu once no released informer of key is still
// stopping, so that its successor may take its name; or returns ctx's
// error, unlocked. On an informer's own goroutine it does not wait, as
// Release does not: the informer may be waiting for that very call to
// return. It returns a *StillStoppingError then, unlocked, rather than
// make the successor at once: the released informer still runs, and its
// metrics would write the series the successor writes (its gauges are
// zeroed once it stops), so the name is handed over only once it has
// stopped. The stack is read only when a released informer of key is
// stopping, which is rare.
func (f *Factory) lockOnceStopped(ctx context.Context, key factoryKey, name string) error {
	for {
		f.mu.Lock()
		f.retireEndedLocked()
		h, ok := f.stopping[key]
		for k, other := range f.stopping {
			// One of another scope of the same resource that holds the
			// name asked for (WithName: a member's selector changes every
			// term) is waited for too: its metrics' series are the
			// successor's (TestASuccessorNamedLikeARetiredInformerStillStoppingWaitsForItsName;
			// another resource's are not,
			// TestAnInformerIsMadeWhileAnotherResourcesInformerOfItsNameStops).
			if !ok && name != "" && k.source.Resource == key.source.Resource && other.inf.Name() == name {
				h, ok = other, true
			}
		}
		if !ok {
			return nil
		}
		f.mu.Unlock()
		if onInformerGoroutine() {
			return &StillStoppingError{Type: key.goType, Name: h.inf.Name()}
		}
		select {
		case <-h.done:
		case <-ctx.Done():
			return fmt.Errorf("sharedinformer: InformerFor: waiting for the released informer of the same scope to stop: %w", ctx.Err())
		}
	}
}

// retireEndedLocked takes out of the factory's map every informer whose
// Start ctx has ended: it stopped for good, so InformerFor makes a fresh
// one of its scope, which the next Start runs, rather than hand it out
// again (TestAnInformerStoppedWithStartsContextIsNotHandedOutAgain), and
// a sync wait does not count it. Until it has stopped, it is stopping as
// a released one is: its successor takes its metrics' name. Its holders
// need not release it (Release of it returns nil once it has stopped).
// It records that one was (retiredSome), so that a term that starts
// nothing is told so by WaitForCacheSync
// (TestAFactoryWaitOnAnInformerStoppedWithStartsContextIsAnError).
// Start, InformerFor, Release and WaitForCacheSync call it first. Call
// with f.mu held.
func (f *Factory) retireEndedLocked() {
	for key, h := range f.informers {
		if !h.ended() {
			continue
		}
		delete(f.informers, key)
		h.inf.retire(f) // marks it released too: sync waits given it, or its handlers, skip it
		f.retiredSome = true
		select {
		case <-h.done:
		default:
			f.stopping[key] = h
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

// informerFrames are how the call stack names the code an informer's own
// goroutines run while they call yours: a listener's deliver (your
// handlers), the reflector's methods (OnError, Served, the trace hook)
// and the informer's Run (its pop loop: the trace hook, Transform).
var informerFrames = []struct{ prefix, contains string }{
	{reflect.TypeFor[Factory]().PkgPath() + ".(*listener[", "]).deliver"},
	{reflect.TypeFor[reflector.Serving]().PkgPath() + ".(*Reflector[", "])."},
	{reflect.TypeFor[Factory]().PkgPath() + ".(*Informer[", "]).Run"},
}

// onInformerGoroutine reports whether the calling goroutine is one of an
// informer's own, inside a call of your code: a handler, OnError, a
// hook. Go gives a goroutine no identity to compare, so it reads the call
// stack, the one place that says so. Cost: a walk of the stack,
// microseconds; Release is rare, and so is an InformerFor while a
// released informer of its scope stops, the one time it asks.
func onInformerGoroutine() bool {
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
		for _, f := range informerFrames {
			if rest, ok := strings.CutPrefix(frame.Function, f.prefix); ok && strings.Contains(rest, f.contains) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}
