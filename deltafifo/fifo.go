package deltafifo

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
)

// ErrClosed is returned by Pop once the DeltaFIFO is closed and empty, and
// by every write after Close.
var ErrClosed = errors.New("deltafifo: closed")

// KnownObjects is the read side of the consumer's cache: what the DeltaFIFO
// needs to know which keys exist downstream. Replace uses it to find keys
// that vanished, Resync to replay them, Delete to ignore unknown keys. An
// *indexer.Indexer satisfies it.
type KnownObjects[T informer.Object] interface {
	Get(key informer.Key) (T, bool)
	ListKeys() []informer.Key
	// Len is how many objects it holds: what a relist asks to learn
	// whether anything could vanish, without listing 100k keys.
	Len() int
}

// Options configures a DeltaFIFO.
type Options[T informer.Object] struct {
	// KnownObjects is the cache the consumer keeps up to date with what it
	// pops (the shared informer's indexer). Without it, Replace can only
	// tombstone keys that are still queued, Resync does nothing, and Delete
	// of a key that is not queued is ignored. Default: nil. A nil pointer
	// held in the interface (the *indexer.Indexer of an indexer.New whose
	// error was ignored) is not nil to Go: New refuses it.
	KnownObjects KnownObjects[T]
	// Trace receives queued, coalesced, ignored, replaced, tombstoned,
	// resync and popped events (see the Kind constants). Default nil: no
	// tracing, no cost.
	Trace informer.TraceHook
	// PartQueueLimit is how many keys may be queued before WaitForRoom
	// waits for the consumer to pop some: it bounds what a relist in parts
	// holds beside the cache when the consumer falls behind (slow index
	// functions, a busy machine). Default (0): DefaultPartQueueLimit.
	// Negative: no limit, WaitForRoom never waits.
	PartQueueLimit int
}

// DefaultPartQueueLimit is Options.PartQueueLimit's default: a few parts
// of a list, about 4% of a cache of 100,000 objects.
const DefaultPartQueueLimit = 4096

// DeltaFIFO is a queue of keys, each carrying every change (Delta) seen for
// it since it was last popped.
//
// A plain FIFO of objects would lose information: if an object is added
// and deleted before the consumer gets to it, which state is left? A queue
// of events would process a hot key once per event. The DeltaFIFO keeps
// one queue position per key (so a key is processed once, however many
// changes it collected) and the whole ordered history for that key (so
// the consumer sees every Added, Updated and Deleted, in order). It also
// knows what the consumer's cache holds, which lets Replace turn "absent
// from the new list" into explicit deletes.
//
// client-go now defaults its informers to RealFIFO, which queues one entry
// per event in arrival order across keys; that keeps a total order but
// loses per-key coalescing. This package teaches the DeltaFIFO.
type DeltaFIFO[T informer.Object] struct {
	// mu guards every field below. Pop holds it while the process
	// function runs (see Pop).
	mu sync.Mutex
	// cond is signalled (Broadcast) when a key is queued, on Close, when
	// a waiter's context ends, and when Pop takes a key while a
	// WaitForRoom waits. Its Locker is &mu; Pops and WaitForRooms wait on
	// it for different conditions, and each re-checks its own.
	cond sync.Cond

	// items[k] is what is queued for key k: its deltas, oldest first, and
	// the number of the write that queued it (see applied.go). One map,
	// not two: a list of 1M objects pays one map insert per object here.
	// Invariant: k is in items iff k is in queue, and items[k].deltas is
	// never empty.
	items map[informer.Key]queued[T]
	// queue holds each queued key once, in order of first arrival since
	// the key was last popped.
	queue []informer.Key
	// high is the longest queue since items was made. Go
	// maps never give memory back as keys are deleted, so after a burst
	// (the initial list, a relist: every object queued at once) the map
	// would keep about 180 bytes per object of that burst for the
	// informer's whole life; once the queue drains after one, Pop makes
	// it anew (shrinkIfDrainedLocked).
	high int

	// synced tracks the first Replace: replaced says it happened, and
	// initialRemaining counts the keys that were queued when it happened
	// (those it queued, its tombstones, and keys already waiting from
	// earlier writes) and are not yet popped. Those keys are always at the
	// front of queue.
	replaced         bool
	initialRemaining int
	// synced is HasSynced: replaced && initialRemaining == 0, once the key
	// that brought initialRemaining to 0 was processed. Written under mu,
	// read without it; once true it stays true.
	synced atomic.Bool

	// A replacement handed over in parts (replaceparts.go): replacing is
	// set from BeginReplace to FinishReplace; listed holds the keys its
	// parts queued, nil when nothing was queued or known as it began
	// (then nothing can vanish); listedCount counts them for the trace.
	replacing   bool
	listed      map[informer.Key]bool
	listedCount int

	closed bool // set by Close; writes fail, Pop drains what is queued, then returns ErrClosed

	// resyncs counts the Resync calls begun (see Resyncs). Written under
	// mu, read without it.
	resyncs atomic.Uint64

	// The applied resourceVersion (see applied.go). seq numbers writes;
	// items[k].at is the number of the write that queued k;
	// marks[marksHead:] are the writes not yet
	// known to be applied, oldest first.
	seq       uint64
	marks     []rvMark
	marksHead int
	// applied is the newest applied write's resourceVersion. Written under
	// mu, read without it: Pop holds mu while the consumer processes, and
	// a reader must not wait for that.
	applied atomic.Pointer[string]
	// progress is closed, and cleared, each time the applied position
	// moves (see Progress). nil while nobody waits, so that a DeltaFIFO
	// nobody waits on makes no channel at all.
	progress atomic.Pointer[chan struct{}]

	// partLimit is Options.PartQueueLimit, its default applied;
	// waitingForRoom counts WaitForRooms waiting for the queue to shrink
	// below it (Pop wakes them).
	partLimit      int
	waitingForRoom int

	known KnownObjects[T] // fixed at New; nil if none
	trace informer.TraceHook
}

// New returns an empty DeltaFIFO. Its one error is a KnownObjects that
// holds a nil pointer, which would fail at the first Replace or Resync;
// every other value of Options is valid.
func New[T informer.Object](opts Options[T]) (*DeltaFIFO[T], error) {
	if opts.KnownObjects != nil && nilcheck.IsNil(opts.KnownObjects) {
		return nil, fmt.Errorf("deltafifo.New: Options.KnownObjects is a nil %T (an indexer.New whose error was ignored?): leave it unset for none", opts.KnownObjects)
	}
	f := &DeltaFIFO[T]{
		items:     map[informer.Key]queued[T]{},
		known:     opts.KnownObjects,
		trace:     opts.Trace,
		partLimit: opts.PartQueueLimit,
	}
	if f.partLimit == 0 {
		f.partLimit = DefaultPartQueueLimit
	}
	f.cond.L = &f.mu
	return f, nil
}

// Len returns the number of queued keys (not deltas).
func (f *DeltaFIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// HasSynced reports whether everything the first Replace queued has been
// popped and processed, or the first Replace was empty. Before the first
// Replace it is false: the consumer has not seen a full list yet.
//
// It takes no lock (Pop holds mu while the consumer processes), so it is
// safe to call from anywhere, the process function included.
func (f *DeltaFIFO[T]) HasSynced() bool { return f.synced.Load() }

// noteSyncedLocked sets synced once the first Replace's keys are all
// processed. The caller holds mu.
func (f *DeltaFIFO[T]) noteSyncedLocked() {
	if f.replaced && f.initialRemaining == 0 {
		f.synced.Store(true)
	}
}

// Close stops the DeltaFIFO: writes from now on fail with ErrClosed, and
// every blocked Pop wakes. Pop still hands out what was queued before
// Close, then returns ErrClosed, so nothing accepted is dropped.
func (f *DeltaFIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// queued is what the queue holds for one key.
type queued[T informer.Object] struct {
	deltas Deltas[T]
	at     uint64 // the number of the write that queued the key
}
