package expectations

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// DefaultTTL is how long an unmet expectation holds back a key before it
// is assumed lost: kube-controller-manager's ReplicaSet controller uses
// the same 5 minutes (ExpectationsTimeout).
const DefaultTTL = 5 * time.Minute

// Options configure Expectations.
type Options struct {
	// TTL is how long an expectation may stay unmet before Satisfied
	// gives up on it and returns true, so that a lost event (a watch
	// outage, a create that failed without telling us) cannot block a key
	// forever. Zero means DefaultTTL; a negative TTL is an error.
	TTL time.Duration
	// Now is the clock; tests replace it. Default: time.Now.
	Now func() time.Time
}

// Expectations remembers, per key (usually the owner object's key), how
// many creations and deletions this controller has asked the API server
// for and not yet seen come back through its informer.
//
// It solves the read-after-write gap (pitfall 3): right after a worker
// creates a child object, the informer's cache does not have it yet. If
// the owner is reconciled again in that gap, the cache says "no child" and
// a naive reconcile creates a second one. With expectations, reconcile
// first asks ExpiresIn(owner): a positive wait means "my own writes are
// still in flight, the cache is stale for this key; do nothing now, and
// look again after that long". Ask ExpiresIn alone, not Satisfied and
// then ExpiresIn: the TTL can run out between the two, and the second
// say 0, a requeue of nothing
// (TestSatisfiedThenExpiresInCanSayWaitAndThenZero). The event that
// arrives with the child normally brings the owner back sooner; the
// requeue is for the event that never comes.
//
// Unlike a cache of the objects themselves, it stores only counts: cheap,
// and immune to what the objects look like.
//
// Safe for concurrent use: workers call Expect* and Satisfied; informer
// handlers call *Observed.
type Expectations[K comparable] struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	// pending[k] counts what k still waits for. A key with no entry has
	// no expectation and is satisfied. Guarded by mu.
	pending map[K]*expectation
}

// expectation is what one key waits for. adds and dels may drop below
// zero when more is observed than expected (someone else created one
// too); that still counts as met.
type expectation struct {
	adds, dels int
	since      time.Time // when it was last set by ExpectCreations/Deletions
}

// New returns empty Expectations, or an error for a negative TTL.
func New[K comparable](opts Options) (*Expectations[K], error) {
	if opts.TTL < 0 {
		return nil, fmt.Errorf("expectations: Options.TTL is %v: it must be positive, or 0 for DefaultTTL", opts.TTL)
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Expectations[K]{ttl: opts.TTL, now: opts.Now, pending: map[K]*expectation{}}, nil
}

// ExpectCreations records that key waits for n creations to be observed,
// replacing any expectation it had. Call it before sending the creates, so
// that an event arriving quickly finds the expectation already there.
// A negative n (a count of missing children gone wrong) is an error, and
// changes nothing (TestANegativeCountIsAnErrorAndChangesNothing).
func (e *Expectations[K]) ExpectCreations(key K, n int) error {
	return e.set("ExpectCreations", key, n, 0)
}

// ExpectDeletions records that key waits for n deletions to be observed,
// replacing any expectation it had. A negative n is an error, and changes
// nothing.
func (e *Expectations[K]) ExpectDeletions(key K, n int) error {
	return e.set("ExpectDeletions", key, 0, n)
}

func (e *Expectations[K]) set(call string, key K, adds, dels int) error {
	if adds < 0 || dels < 0 {
		return fmt.Errorf("expectations: %s(%v, %d): the count must not be negative", call, key, adds+dels)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending[key] = &expectation{adds: adds, dels: dels, since: e.now()}
	return nil
}

// CreationObserved lowers key's expected creations by one. Call it from
// the informer's add handler for a child of key, and also when the server
// refused a create (Refused): no event will come for it. Not for a
// timeout, a 5xx or a lost answer: the server may have stored the child,
// and its event will come
// (TestACreateThatTimedOutAfterTheServerStoredItIsStillExpected).
func (e *Expectations[K]) CreationObserved(key K) { e.lower(key, 1, 0) }

// DeletionObserved lowers key's expected deletions by one. Call it from
// the informer's delete handler for a child of key, and also when the
// server refused a delete (as for CreationObserved, not a timeout).
func (e *Expectations[K]) DeletionObserved(key K) { e.lower(key, 0, 1) }

func (e *Expectations[K]) lower(key K, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.pending[key]; ok {
		x.adds -= adds
		x.dels -= dels
	}
}

// Satisfied reports whether key may be reconciled from the cache: it has
// no expectation, everything it expected was observed, or its expectation
// is older than the TTL (assumed lost). Cost: O(1).
func (e *Expectations[K]) Satisfied(key K) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.pending[key]
	switch {
	case !ok:
		return true
	case x.adds <= 0 && x.dels <= 0:
		return true
	case e.now().Sub(x.since) > e.ttl:
		return true
	}
	return false
}

// ExpiresIn returns how long key's unmet expectation will still hold it
// back: the time until Satisfied(key) turns true when its TTL has passed,
// always positive while key is unsatisfied; 0 if it is satisfied already.
// A reconcile that finds key unsatisfied should requeue it after this
// long (workqueue's Result.RequeueAfter): if the event it waits for was
// lost, nothing else may ever bring the key back. Cost: O(1).
func (e *Expectations[K]) ExpiresIn(key K) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.pending[key]
	if !ok || (x.adds <= 0 && x.dels <= 0) {
		return 0
	}
	elapsed := e.now().Sub(x.since)
	if elapsed > e.ttl {
		return 0
	}
	left := e.ttl - elapsed
	if left < 0 || left == math.MaxInt64 { // beyond the longest Duration (the longest TTL, a clock gone back): saturate
		return math.MaxInt64
	}
	return left + time.Nanosecond // Satisfied needs more than the TTL to have passed
}

// Forget drops key's expectation, for when the owner itself was deleted.
func (e *Expectations[K]) Forget(key K) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
}
