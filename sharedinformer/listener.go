package sharedinformer

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/listwatch/informer"
)

// listener owns one handler: a buffer of notifications and the goroutine
// that delivers them, one at a time, in order. The informer's pop loop
// only appends to the buffer, which never blocks, so a slow or stuck
// handler delays nobody but itself.
type listener[T informer.Object] struct {
	name    string
	handler Handler[T]
	trace   informer.TraceHook
	report  func(error) // receives recovered handler panics; never nil
	logger  *slog.Logger
	policy  BufferPolicy

	// resyncPeriod is 0 for "no resync". nextResync is when this handler
	// is next due. Guarded by the informer's mu: AddEventHandler sets it,
	// and the reflector's goroutine (store.Resync) reads and advances it.
	resyncPeriod time.Duration
	nextResync   time.Time

	mu sync.Mutex
	// buf holds the notifications not yet handed to the handler, oldest
	// first. Guarded by mu.
	buf ring[notification[T]]
	// warned is set when buf passed policy.WarnDepth, and cleared when it
	// drains, so a burst warns once. Guarded by mu.
	warned bool
	// initialPending counts initial-list adds queued or being delivered.
	// Guarded by mu.
	initialPending int
	// upstreamSynced says the informer has synced, so no more initial-list
	// adds can come. Guarded by mu.
	upstreamSynced bool
	// removed says the handler was removed: run returns, add drops.
	// Guarded by mu.
	removed bool
	// started says start was called. Guarded by mu.
	started bool
	// ended is why the handler stopped (see Registration.Err), set before
	// done closes. Guarded by mu.
	ended error

	synced chan struct{} // closed once upstreamSynced and initialPending == 0, or on removal
	wake   chan struct{} // capacity 1: "there may be work, or we were removed"
	done   chan struct{} // closed when run returns, or on removal if run never started
}

func newListener[T informer.Object](name string, h Handler[T], opts HandlerOptions, policy BufferPolicy, trace informer.TraceHook, report func(error), logger *slog.Logger) *listener[T] {
	return &listener[T]{
		name:         name,
		handler:      h,
		trace:        trace,
		report:       report,
		logger:       logger,
		policy:       policy,
		resyncPeriod: opts.ResyncPeriod,
		buf:          newRing[notification[T]](policy.InitialSize),
		synced:       make(chan struct{}),
		wake:         make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
}

// add queues n for delivery. It never blocks. Cost: O(1) amortised.
func (l *listener[T]) add(n notification[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.removed {
		return
	}
	l.buf.push(n)
	if n.kind == addNotification && n.flag {
		l.initialPending++
	}
	if depth := l.buf.len(); depth > l.policy.WarnDepth && !l.warned {
		l.warned = true
		l.logger.Warn("an event handler is falling behind: is it blocked, or doing slow work that belongs in a workqueue worker?",
			"handler", l.name, "waiting", depth, "warnDepth", l.policy.WarnDepth)
		l.emit(KindBufferWarning, n.obj, fmt.Sprintf("%s has %d notifications waiting (warning past %d)", l.name, depth, l.policy.WarnDepth))
	}
	select {
	case l.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// start runs the listener on a goroutine of its own, counted by running.
func (l *listener[T]) start(ctx context.Context, running *sync.WaitGroup) {
	l.mu.Lock()
	l.started = true
	l.mu.Unlock()
	running.Go(func() { l.run(ctx) })
}

// run delivers notifications until ctx ends or the handler is removed.
// Notifications still buffered then are dropped: nobody will handle them,
// and no call starts once ctx has ended.
func (l *listener[T]) run(ctx context.Context) {
	defer func() {
		l.mu.Lock()
		if l.ended == nil { // not removed: Run's context ended
			l.ended = context.Cause(ctx)
		}
		l.mu.Unlock()
		close(l.done)
	}()
	for {
		n, ok := l.next(ctx)
		if !ok {
			return
		}
		l.deliver(n)
	}
}

// next waits for the oldest buffered notification. It reports false once
// the handler was removed or ctx ended, even with notifications buffered:
// shutdown waits for at most the call in progress, never for a backlog.
func (l *listener[T]) next(ctx context.Context) (notification[T], bool) {
	for {
		l.mu.Lock()
		if l.removed || ctx.Err() != nil {
			l.mu.Unlock()
			return notification[T]{}, false
		}
		if n, ok := l.buf.pop(); ok {
			if l.buf.len() == 0 {
				l.warned = false
			}
			l.mu.Unlock()
			return n, true
		}
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-ctx.Done():
			return notification[T]{}, false
		}
	}
}

// deliver calls the handler, recovering a panic so that one broken handler
// cannot take the informer down, and then counts an initial add as done.
func (l *listener[T]) deliver(n notification[T]) {
	defer func() {
		if n.kind == addNotification && n.flag {
			l.mu.Lock()
			l.initialPending--
			l.markSyncedLocked()
			l.mu.Unlock()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			key, _ := informer.KeyOf(n.obj)
			l.emit(KindHandlerPanic, n.obj, fmt.Sprintf("%s panicked on %s: %v", l.name, n, r))
			l.report(fmt.Errorf("handler %s panicked on %s of %s: %v\n%s", l.name, n.kind, key, r, debug.Stack()))
		}
	}()
	if l.trace != nil {
		l.mu.Lock()
		waiting := l.buf.len()
		l.mu.Unlock()
		l.emit(KindDelivered, n.obj, fmt.Sprintf("%s to %s, %d waiting", n, l.name, waiting))
	}
	n.deliver(l.handler)
}

// markUpstreamSynced records that the informer has synced.
func (l *listener[T]) markUpstreamSynced() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.upstreamSynced = true
	l.markSyncedLocked()
}

// markSyncedLocked closes synced once it is true. The caller holds mu.
func (l *listener[T]) markSyncedLocked() {
	if !l.upstreamSynced || l.initialPending > 0 {
		return
	}
	select {
	case <-l.synced:
	default:
		close(l.synced)
	}
}

// remove stops delivery, for reason: run returns after the current
// callback, and buffered notifications are dropped. synced closes, since
// nothing more of the initial list will come; done closes now if run
// never started.
func (l *listener[T]) remove(reason error) {
	l.mu.Lock()
	l.removed = true
	l.ended = cmp.Or(l.ended, reason)
	l.buf = newRing[notification[T]](1)
	l.initialPending = 0
	select {
	case <-l.synced:
	default:
		close(l.synced)
	}
	if !l.started {
		close(l.done)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// endedErr is why the handler stopped, once done is closed; nil before.
func (l *listener[T]) endedErr() error {
	select {
	case <-l.done:
	default:
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// depth returns how many notifications wait.
func (l *listener[T]) depth() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.len()
}

func (l *listener[T]) emit(kind string, obj T, detail string) {
	if l.trace == nil {
		return
	}
	e := informer.TraceEvent{Stage: informer.StageListener, Kind: kind, Detail: detail}
	if !informer.IsNil(obj) {
		if key, err := informer.KeyOf(obj); err == nil {
			e.Key = key.String()
		}
		e.ResourceVersion = obj.GetResourceVersion()
	}
	l.trace.Emit(e)
}
