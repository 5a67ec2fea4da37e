package scale

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// expirer wraps the watches a ListerWatcher opens so that the harness can
// end the current one with 410 Gone, as a server does when the watch's
// resourceVersion was compacted away: both libraries then relist. It is
// the same fault for both, injected the same way.
type expirer struct {
	mu      sync.Mutex
	current *expirable // the open watch, nil between one watch's end and the next
	// pending is an expiry asked for while no watch was open (a library
	// can be synced before it opens its WATCH): the next watch gets it.
	pending bool
	// expired is when expire last ran, and relisted when the library
	// first asked for the list again after it (a LIST, or a WATCH that
	// streams the list): the relist's start, whatever backoff the
	// library waited before it.
	expired, relisted time.Time
}

// noteRequest records the start of a relist: the first LIST, or WATCH
// streaming the initial events, after an expiry.
func (x *expirer) noteRequest(opts metav1.ListOptions, list bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	streams := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if !x.expired.IsZero() && x.relisted.IsZero() && (list || streams) {
		x.relisted = time.Now()
	}
}

// relistStart returns when the relist after the last expiry started.
func (x *expirer) relistStart() (time.Time, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.relisted, !x.relisted.IsZero()
}

// wrap returns w with an expiry the next expire call triggers, or, if one
// is pending, already triggered.
func (x *expirer) wrap(w watch.Interface) watch.Interface {
	e := &expirable{inner: w, out: make(chan watch.Event), expire: make(chan struct{}), stop: make(chan struct{})}
	x.mu.Lock()
	if x.pending {
		x.pending = false
		close(e.expire)
	} else {
		x.current = e
	}
	x.mu.Unlock()
	go func() {
		e.run()
		x.forget(e)
	}()
	return e
}

// forget clears current once e, its watch, has ended.
func (x *expirer) forget(e *expirable) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.current == e {
		x.current = nil
	}
}

// expire ends the open watch with an ERROR event carrying 410 Gone; with
// none open, the next one opened.
func (x *expirer) expire() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.expired, x.relisted = time.Now(), time.Time{}
	if x.current == nil {
		x.pending = true
		return
	}
	close(x.current.expire)
	x.current = nil
}

// listFunc is the shape of client-go's List.
type listFunc func(context.Context, metav1.ListOptions) (runtime.Object, error)

// wrapList returns a List that notes a relist's start.
func (x *expirer) wrapList(list listFunc) listFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		x.noteRequest(opts, true)
		return list(ctx, opts)
	}
}

// watchFunc is the shape of both libraries' Watch.
type watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)

// wrapWatch returns a Watch that opens one through open and wraps it.
func (x *expirer) wrapWatch(open watchFunc) watchFunc {
	return func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		x.noteRequest(opts, false)
		w, err := open(ctx, opts)
		if err != nil {
			return nil, err
		}
		return x.wrap(w), nil
	}
}

// wrapListWatch makes lw, a client-go ListWatch, list through wrapList
// and watch through wrapWatch: client-go's reflector calls the
// functions that take a context.
func (x *expirer) wrapListWatch(lw *cache.ListWatch) {
	lw.ListWithContextFunc = cache.ListWithContextFunc(x.wrapList(listFunc(lw.ListWithContextFunc)))
	lw.WatchFuncWithContext = cache.WatchFuncWithContext(x.wrapWatch(watchFunc(lw.WatchFuncWithContext)))
}

// expirable forwards inner's events until it is expired or stopped.
type expirable struct {
	inner  watch.Interface
	out    chan watch.Event
	expire chan struct{}
	stop   chan struct{}
	once   sync.Once
}

func (e *expirable) run() {
	defer close(e.out)
	defer e.inner.Stop()
	for {
		select {
		case ev, ok := <-e.inner.ResultChan():
			if !ok {
				return
			}
			select {
			case e.out <- ev:
			case <-e.stop:
				return
			}
		case <-e.expire:
			gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version (injected by the scale ladder)"}
			select {
			case e.out <- watch.Event{Type: watch.Error, Object: gone}:
			case <-e.stop:
			}
			return
		case <-e.stop:
			return
		}
	}
}

func (e *expirable) Stop()                          { e.once.Do(func() { close(e.stop) }) }
func (e *expirable) ResultChan() <-chan watch.Event { return e.out }
