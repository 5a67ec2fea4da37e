package sharedinformer

import (
	"errors"
	"fmt"

	"github.com/listwatch/informer/internal/nilcheck"
)

// AddEventHandler registers h and returns its Registration. It may be
// called before or after Run.
//
// A handler added before the informer has synced receives the initial
// list as it arrives. A handler added later first receives the whole
// current cache as OnAdd(obj, true), then every change after that; no
// change is missed or delivered twice across the switch, because the
// replay and the informer's distribution of changes take the same lock.
//
// After Run, a resync period shorter than the informer's resync check
// period (the smallest period registered before Run) is raised to it, and
// a resync period on an informer that runs without resync is an error.
//
// The options are optional: most handlers need none, and
// AddEventHandler(h) names the handler "handler-N" and never resyncs it.
// Give at most one HandlerOptions.
//
// It fails if opts is invalid (a resync period below MinimumResyncPeriod,
// more than one HandlerOptions), another registered handler has its name,
// h is nil, or the informer has stopped (Run's context ended): a handler
// added then would never be called.
func (i *Informer[T]) AddEventHandler(h Handler[T], options ...HandlerOptions) (*Registration, error) {
	if nilcheck.IsNil(h) {
		return nil, errors.New("sharedinformer: AddEventHandler: the handler is nil")
	}
	var opts HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		opts = options[0]
	default:
		return nil, fmt.Errorf("sharedinformer: AddEventHandler: %d HandlerOptions given; give at most one", len(options))
	}
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("sharedinformer: AddEventHandler: %w", err)
	}

	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopping || (i.runCtx != nil && i.runCtx.Err() != nil) {
		return nil, errors.New("sharedinformer: AddEventHandler: the informer has stopped (its Run context ended)")
	}
	i.handlersAdded++
	if opts.Name == "" {
		opts.Name = fmt.Sprintf("handler-%d", i.handlersAdded)
	}
	for reg := range i.listeners {
		if reg.name == opts.Name {
			// Traces, logs and metrics tell handlers apart by name.
			return nil, fmt.Errorf("sharedinformer: AddEventHandler: a handler named %q is registered already; give each its own name", opts.Name)
		}
	}
	if i.runCtx != nil && opts.ResyncPeriod > 0 {
		// The reflector's resync timer was set by Run from the handlers
		// registered then; it cannot tick faster for a later one.
		if i.resyncCheck == 0 {
			return nil, fmt.Errorf("sharedinformer: AddEventHandler: handler %q asks for resync, but the informer runs without one: register a resyncing handler before Run", opts.Name)
		}
		opts.ResyncPeriod = max(opts.ResyncPeriod, i.resyncCheck)
	}
	l := newListener(opts.Name, h, opts, i.opts.Buffer, i.opts.Trace, i.report, i.logger)
	if opts.ResyncPeriod > 0 {
		l.nextResync = i.opts.Clock.Now().Add(opts.ResyncPeriod)
	}
	reg := &Registration{name: opts.Name, of: i, synced: l.synced, stopped: l.done, depth: l.depth, ended: l.endedErr}
	i.listeners[reg] = l

	// Replay: everything already in the cache, as part of this handler's
	// initial list. Holding mu, no change can be distributed meanwhile.
	for _, obj := range i.indexer.List() {
		l.add(notification[T]{kind: addNotification, obj: obj, flag: true})
	}
	if i.isSynced() {
		l.markUpstreamSynced()
	}
	if i.runCtx != nil { // already running: start its goroutine now
		i.startListenerLocked(l)
	}
	return reg, nil
}

// RemoveEventHandler stops delivering to the handler of reg. The call in
// progress, if any, finishes; nothing after it is delivered, and the
// handler's goroutine ends: reg.Stopped closes then, and reg.Err is
// ErrHandlerRemoved. reg.Synced closes too, whether or not the initial
// list was delivered. It fails if reg is not registered here.
func (i *Informer[T]) RemoveEventHandler(reg *Registration) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	l, ok := i.listeners[reg]
	if !ok {
		return errors.New("sharedinformer: RemoveEventHandler: this registration is not registered with this informer")
	}
	delete(i.listeners, reg)
	l.remove(ErrHandlerRemoved)
	return nil
}

// endUnrun ends an informer that never ran and never will (its last
// holder released it before Start): its handlers stop with reason, Run
// and AddEventHandler fail from now on, and the factory's hook gives its
// metrics' names back.
func (i *Informer[T]) endUnrun(reason error) {
	i.mu.Lock()
	i.stopping = true
	for reg, l := range i.listeners {
		delete(i.listeners, reg)
		l.remove(reason)
	}
	i.mu.Unlock()
	i.afterRun()
}

// startListenerLocked starts l's goroutine under the run context. The
// caller holds mu.
func (i *Informer[T]) startListenerLocked(l *listener[T]) {
	l.start(i.runCtx, &i.listenersRunning)
}
