package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/reflector"
)

// Options configure an Informer. ListerWatcher is required; every other
// field has the default its comment gives.
type Options[T informer.Object] struct {
	// ListerWatcher is the collection to mirror. Required. Each object it
	// lists or watches becomes the informer's, which writes into it to
	// share what it repeats with the objects cached before it (see Memory
	// in the package doc): it must hand out a fresh object every time, as
	// reflector.ListerWatcher requires, not one it keeps or gives another
	// informer too.
	ListerWatcher reflector.ListerWatcher[T]
	// Name identifies the informer in logs, errors and the sync wait's
	// report. Default: what the ListerWatcher says it lists if it is a
	// fmt.Stringer ("configmaps in namespace shop, labels app=web", as a
	// reflector.RESTListerWatcher says), otherwise T's Go type.
	Name string
	// Reflector tunes how the informer lists, watches and retries: page
	// size, initial list, streaming list, watch timeout, backoff. The rest
	// of the reflector's options the informer sets itself. Default: the
	// reflector's defaults, so the first LIST comes in pages of 500 (an
	// informer from InformerFor gets WithFactoryDefaults instead: one
	// unpaged LIST).
	Reflector reflector.Tuning
	// PartQueueLimit is how many keys may wait to be popped before a list
	// read in parts waits for the informer to catch up (for at most
	// Reflector.HoldBack a request): it bounds what a relist holds beside
	// the cache when slow index functions or a busy machine hold the
	// informer back. Default (0): deltafifo.DefaultPartQueueLimit.
	// Negative: no limit, a list never waits.
	PartQueueLimit int
	// Indexers are added to the namespace index every Indexer has built
	// in (indexer.NamespaceIndex). Default: none.
	Indexers map[string]indexer.IndexFunc[T]
	// Resource names the resource in the lister's NotFound errors, such as
	// {Resource: "configmaps"}. Default: the T's Go type name.
	Resource schema.GroupResource
	// Buffer shapes each handler's buffer. Default: see BufferPolicy.
	Buffer BufferPolicy
	// DetectMutations turns on the indexer's mutation detector (pitfall 2):
	// call Indexer().CheckMutations() in your tests, after the handlers and
	// workers under test have run, to learn whether one of them modified a
	// cached object. (It is not checked periodically: a check running
	// while a handler mutates is itself a data race, which -race reports.)
	// Default: off.
	DetectMutations bool
	// Trace receives the trace events of every stage: reflector, DeltaFIFO,
	// indexer and handlers. Default: nil, no tracing, no cost.
	Trace informer.TraceHook
	// OnError receives what goes wrong without stopping the informer: a
	// handler's recovered panic, a change the cache rejected (an
	// IndexFunc's error: that change alone is dropped, the cache keeps
	// what it had, and the key's later changes still apply), and the
	// reflector's errors. Default: log it with Logger at level Error (the
	// reflector's errors, most of them retried, at level Warn).
	OnError func(error)
	// Served, if set, tells a 404 from a resource the server no longer
	// serves: see reflector.Options.Served. While the resource is not
	// served in the informer's version the informer makes no request,
	// and it lists from scratch once it is served again. Meanwhile its
	// cache depends on why: if no version of the resource is served (the
	// resource is gone), the cache is empty, and its handlers got a
	// delete for each object it held, as a final state unknown; if
	// another version is (a CRD that moved to a new version, which
	// deletes nothing), the cache keeps what it held, unwatched (changes
	// and deletions since are not in it), and the handlers get nothing:
	// never a delete for a live object. OnError then gets a
	// *reflector.VersionNotServedError naming the versions served.
	// Default: nil, every 404 is retried; InformerFor sets it from the
	// server's discovery.
	Served func(ctx context.Context) (reflector.Serving, error)
	// Logger logs warnings, such as a handler falling behind.
	// Default: slog.Default().
	Logger *slog.Logger
	// Clock decides when each handler's resync is due, and times the
	// reflector's resync ticks. Default:
	// informer.RealClock; tests pass workqueue.FakeClock.
	Clock informer.Clock
}

// Informer keeps a local, indexed cache of one collection of objects up to
// date with the API server and tells any number of handlers about every
// change. It is client-go's SharedIndexInformer: "shared" because one
// informer (one LIST, one WATCH, one cache) serves every handler in the
// process that needs that collection, instead of each opening its own.
//
// Inside, one reflector feeds one DeltaFIFO, and one loop pops it:
// for each key it updates the indexer, then notifies every handler (see
// process). Each handler has its own goroutine and buffer, so a slow one
// delays only itself.
//
// Create one with New, add handlers with AddEventHandler (before or after
// Run), read the cache with Lister, and Run it once.
type Informer[T informer.Object] struct {
	opts    Options[T]
	indexer *indexer.Indexer[T]
	fifo    *deltafifo.DeltaFIFO[T]
	lister  *lister.Lister[T]
	report  func(error)
	logger  *slog.Logger
	name    string
	// stopped, if set, is called by the factory once Run has returned:
	// it gives the informer's metrics names back. Set before Run.
	stopped func()

	// lastFailure is the reflector's latest failure, kept for the sync
	// wait's report; nil until one happens.
	lastFailure atomic.Pointer[error]

	// reflector is created by Run; nil before.
	reflector atomic.Pointer[reflector.Reflector[T]]

	// synced is closed once the DeltaFIFO has synced: every object of the
	// first list is in the cache and was handed to the handlers.
	synced     chan struct{}
	syncedOnce sync.Once
	// released is closed when the last holder of a factory's informer
	// gives it back (see Release), before it has stopped: from then on it
	// will never sync, and sync waits stop waiting for it. Never closed
	// for an informer made with New.
	released     chan struct{}
	releasedOnce sync.Once
	// retiredFrom is the factory that took the informer out of its map
	// once the ctx given to Start had ended (see retireEndedLocked); nil
	// until then, and for an informer made with New.
	retiredFrom atomic.Pointer[Factory]

	// mu guards the fields below. process holds it while it updates the
	// cache and notifies handlers, so registration and removal of handlers
	// see either all of a key's changes or none.
	mu sync.Mutex
	// listeners are the registered handlers.
	listeners     map[*Registration]*listener[T]
	handlersAdded int // to name handlers "handler-N"
	// dueAt[n] are the handlers found due at the DeltaFIFO's resync
	// number n (store.Resync). A popped key's reminder (a Sync, or a
	// relisted object that did not change) goes only to the handlers due
	// at the resyncs it answers (owedBy); an entry no queued key can
	// still answer is dropped as keys pop (forgetAnswered).
	dueAt map[uint64][]*listener[T]
	// resyncCheck is the reflector's resync period, fixed by Run: the
	// smallest resync period of the handlers registered before Run.
	resyncCheck time.Duration
	transform   func(T) (T, error)
	// runCtx is Run's context, nil until Run starts.
	runCtx context.Context
	// stopping is set by Run, once its context ended, before it waits for
	// the handlers' goroutines: from then on AddEventHandler fails.
	stopping bool

	// listenersRunning counts the handler goroutines.
	listenersRunning sync.WaitGroup
}

// New returns an Informer for opts. It fails if opts.ListerWatcher is nil,
// an index is named like the built-in namespace index, or an IndexFunc is
// nil.
func New[T informer.Object](opts Options[T]) (*Informer[T], error) {
	if opts.ListerWatcher == nil {
		return nil, errors.New("sharedinformer: Options.ListerWatcher is nil")
	}
	indexers := map[string]indexer.IndexFunc[T]{}
	for name, fn := range opts.Indexers {
		if name == indexer.NamespaceIndex {
			return nil, fmt.Errorf("sharedinformer: index %q is built in; choose another name", name)
		}
		if fn == nil {
			return nil, fmt.Errorf("sharedinformer: the IndexFunc of index %q is nil", name)
		}
		indexers[name] = fn
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	report := opts.OnError // nil keeps the reflector's own default (a warning)
	if report == nil {
		logger := opts.Logger
		report = func(err error) { logger.Error("informer", "err", err) }
	}
	if opts.Resource.Empty() {
		var zero T
		opts.Resource = schema.GroupResource{Resource: fmt.Sprintf("%T", zero)}
	}
	if opts.Name == "" {
		opts.Name = nameOf(opts.ListerWatcher)
	}
	opts.Buffer = opts.Buffer.withDefaults()
	opts.Clock = informer.ClockOrReal(opts.Clock)

	idx, err := indexer.New(indexer.Options[T]{Indexers: indexers, Trace: opts.Trace, DetectMutations: opts.DetectMutations})
	if err != nil {
		return nil, err
	}
	lst, err := lister.New(idx, opts.Resource)
	if err != nil {
		return nil, err
	}
	fifo, err := deltafifo.New(deltafifo.Options[T]{KnownObjects: idx, Trace: opts.Trace, PartQueueLimit: opts.PartQueueLimit})
	if err != nil {
		return nil, err
	}
	return &Informer[T]{
		opts:      opts,
		indexer:   idx,
		fifo:      fifo,
		lister:    lst,
		report:    report,
		logger:    opts.Logger,
		name:      opts.Name,
		synced:    make(chan struct{}),
		released:  make(chan struct{}),
		listeners: map[*Registration]*listener[T]{},
	}, nil
}

// nameOf is what lw says it lists, or T's Go type.
func nameOf[T informer.Object](lw reflector.ListerWatcher[T]) string {
	if s, ok := lw.(fmt.Stringer); ok {
		return s.String()
	}
	var zero T
	return fmt.Sprintf("%T", zero)
}

// afterRun runs the factory's stopped hook, if any.
func (i *Informer[T]) afterRun() {
	if i.stopped != nil {
		i.stopped()
	}
}

// markReleased records that the informer's last holder released it.
func (i *Informer[T]) markReleased() { i.releasedOnce.Do(func() { close(i.released) }) }

func (i *Informer[T]) retire(f *Factory) {
	i.retiredFrom.Store(f)
	i.markReleased() // it will never sync again, and its factory holds it no more
}
func (i *Informer[T]) retiredBy() *Factory { return i.retiredFrom.Load() }

// releasedSignal is closed once the informer's last holder released it.
func (i *Informer[T]) releasedSignal() <-chan struct{} { return i.released }

// Name identifies the informer: Options.Name or its default.
func (i *Informer[T]) Name() string { return i.name }

// syncStatus is the informer's part of a NotSyncedError.
func (i *Informer[T]) syncStatus() (string, error) {
	if err := i.lastFailure.Load(); err != nil {
		return i.name, *err
	}
	return i.name, nil
}

// Lister returns a typed, read-only view of the cache.
func (i *Informer[T]) Lister() *lister.Lister[T] { return i.lister }

// Indexer returns a read-only view of the cache, for index queries.
// Only the informer writes to its cache.
func (i *Informer[T]) Indexer() indexer.ReadOnly[T] { return i.indexer.ReadOnly() }

// Synced returns a channel that is closed once the cache holds the first
// full list and it has been put in the buffer of every handler registered
// by then: the cache is ready to read (pitfall 4). The handlers may not
// have run yet; to wait until one has handled its initial list, wait on
// its Registration.Synced instead. Workers that only read listers wait on
// this; workers fed by a handler wait on the handler's Registration.
func (i *Informer[T]) Synced() <-chan struct{} { return i.synced }

// HasSynced reports whether Synced is closed.
func (i *Informer[T]) HasSynced() bool { return i.isSynced() }

func (i *Informer[T]) isSynced() bool {
	select {
	case <-i.synced:
		return true
	default:
		return false
	}
}

// LastSyncResourceVersion is the resourceVersion the cache has applied:
// that of the newest list, event or bookmark whose changes, and all
// changes before them, are in the cache (and handed to the handlers'
// buffers), except the changes it refused: one the transform rejected or
// an IndexFunc failed on counts as applied, though the cache keeps the
// version it had and no handler hears of it
// (TestTheCacheReachesTheResourceVersionOfAChangeItRefusedWithoutHoldingIt,
// TestTheCacheReachesTheResourceVersionOfAChangeItsIndexRefusedWithoutHoldingIt).
// It is never ahead of the cache, though it may trail the reflector,
// which has already queued what comes next. "" before anything is
// applied.
func (i *Informer[T]) LastSyncResourceVersion() string { return i.fifo.AppliedResourceVersion() }

// SetTransform sets a function applied to every object before it is
// queued and cached, such as one that drops managedFields (pitfall 7).
// It must return the object to keep, which it may modify (it is the
// informer's own copy), or an error to reject the object. The object
// returned becomes the cache's: the informer writes into it to share
// what it repeats with the objects cached before it (see Memory in the
// package doc), so it must be the object given or a new one, and
// neither it nor any part of it (a slice, a map, a pointer it holds) one
// the transform keeps, hands to anyone else, or took from the cache. It
// fails once
// Run has started, since objects already cached would not have been
// transformed.
//
// A rejected object is not queued, on a watch event and on a relist alike:
// the cache keeps the version of it that it had (none, for a new object),
// and no handler hears of it. So a rejection never turns into a delete of
// an object the server still has (a deletion the server reports still
// deletes the last accepted version, and so does one a relist finds: a
// rejected object whose UID is not that of the cached version is a new
// object, and the old one is deleted, leaving nothing under its key).
// Each rejection is reported to
// OnError as a *TransformError and traced as KindTransformRejected, with
// the object's key and resourceVersion.
func (i *Informer[T]) SetTransform(transform func(T) (T, error)) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.runCtx != nil {
		return errors.New("sharedinformer: SetTransform after Run")
	}
	i.transform = transform
	return nil
}
