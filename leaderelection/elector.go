package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/random"
)

// Elector is one candidate for one Lease. Run takes part in an election:
// it acquires the Lease (or waits for it), leads while it renews it, and
// returns when its term ends. Unlike a lock, a Lease is never held for
// sure: the leader holds it only as long as it renews it in time, and
// every decision is a write guarded by the Lease's resourceVersion.
type Elector struct {
	cfg     Config
	leases  leases
	running atomic.Bool // true while Run runs: one Run at a time

	// Owned by Run's goroutine (Run, attempt, release):
	observed        *coordinationv1.Lease // the last version read or written; nil before the first
	observedAt      time.Time             // this host's time when observed's resourceVersion was first seen, or its absence
	absent          bool                  // every look since observed found the Lease deleted; observedAt is when the first did
	lastLook        time.Time             // this host's time when the last look (a GET answered, or 404) was sent; zero before the first
	lastLookLeading bool                  // the last look was a leader's (lookSpacing)
	createSent      bool                  // a create of the Lease may have landed: it left the client and was not refused (leases.create)
	unanswered      bool                  // a standby's write since its last look may have made the Lease its own, unanswered
	reported        string                // the holder last passed to OnNewLeader
	leaders         *notifier             // calls OnNewLeader apart from Run's goroutine
	lastLogged      string                // the last failure logged, so each distinct failure is logged once

	mu        sync.Mutex
	inTerm    bool      // guarded by mu; from acquisition until OnStoppedLeading is called
	lastRenew time.Time // guarded by mu; when the term's last successful write was sent
}

// New validates cfg, fills in its defaults and returns an Elector. A
// *ConfigError names the field that is wrong.
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg, leases: leases{client: cfg.Client, namespace: cfg.Namespace, name: cfg.Name, clock: cfg.Clock}}, nil
}

// Identity is what this candidate writes as the Lease's holder.
func (e *Elector) Identity() string { return e.cfg.Identity }

// Run takes part in the election until ctx ends or one term ends:
//
//	acquiring: try every RetryPeriod (plus jitter) until the Lease is
//	           free, expired or ours; then start OnStartedLeading.
//	leading:   renew every RetryPeriod; the term ends when ctx ends, when
//	           another candidate holds the Lease, when a renew meets
//	           another's write twice in one attempt (a 409 Conflict to
//	           the update of a Lease it read as its own), or at the last
//	           successful renew plus RenewDeadline.
//	stopping:  wait for OnStartedLeading to return, release the Lease if
//	           ReleaseOnCancel, call OnStoppedLeading, return.
//
// It returns nil when ctx ended a term (with ReleaseOnCancel, once the
// release landed, or found the Lease deleted: a release that failed is
// the error, naming it); an
// error wrapping ErrLost when leadership was lost; an error wrapping
// ctx.Err() (and the last failed
// attempt's error, such as a Forbidden) when ctx ended before the Lease
// was acquired. Run again to stand again. With Config.OwnLeaseOnly it
// takes only a Lease that is absent or already its own, and, before it
// leads, returns an error wrapping ErrNotOwnLease once it finds its
// Lease another's, released, or deleted: that identity may not stand
// again. It never exits the process: what to do on loss is the
// caller's choice.
func (e *Elector) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("leaderelection: Run is already running on this Elector")
	}
	defer e.running.Store(false)
	e.leaders = startNotifier(e.cfg.Callbacks.OnNewLeader)
	defer e.leaders.stop()
	acquired, err := e.acquire(ctx)
	if err != nil {
		return err
	}
	return e.lead(ctx, acquired)
}

// acquire tries until this candidate holds the Lease, and returns when
// its acquiring write was sent.
func (e *Elector) acquire(ctx context.Context) (time.Time, error) {
	e.cfg.Logger.Info("leaderelection: trying to acquire", "lease", e.lease(), "identity", e.cfg.Identity)
	var lastErr error
	for {
		held, sent, err := e.attempt(ctx, false)
		if errors.Is(err, ErrNotOwnLease) {
			e.cfg.Logger.Info("leaderelection: the Lease is not this identity's; not acquiring it", "lease", e.lease(), "identity", e.cfg.Identity, "err", err)
			return time.Time{}, err
		}
		if held {
			e.mu.Lock()
			e.inTerm, e.lastRenew = true, sent
			e.mu.Unlock()
			e.lastLogged = ""
			e.cfg.Logger.Info("leaderelection: acquired", "lease", e.lease(), "identity", e.cfg.Identity)
			return sent, nil
		}
		if ctx.Err() == nil {
			lastErr = err // nil after an attempt that failed only to win
			e.logFailure(err)
		}
		if !informer.Sleep(ctx, e.cfg.Clock, jittered(e.cfg.RetryPeriod)) {
			if e.cfg.ReleaseOnCancel && e.unanswered {
				e.releaseUnanswered()
			}
			if lastErr != nil {
				return time.Time{}, fmt.Errorf("leaderelection: lease %s not acquired: %w; last attempt: %w", e.lease(), ctx.Err(), lastErr)
			}
			return time.Time{}, fmt.Errorf("leaderelection: lease %s not acquired: %w", e.lease(), ctx.Err())
		}
	}
}

// lead runs one term, which started with a write sent at acquired.
func (e *Elector) lead(ctx context.Context, acquired time.Time) error {
	term := Term{Lease: e.lease(), Identity: e.cfg.Identity, Fence: e.fence()}
	leading := newLeadingContext(ctx, e.cfg.Clock, e.cfg.RenewDeadline, term, acquired)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		e.cfg.Callbacks.OnStartedLeading(leading)
	}()

	var lastErr error
	for informer.Sleep(leading, e.cfg.Clock, e.cfg.RetryPeriod) {
		held, sent, err := e.attempt(leading, true)
		switch {
		case held:
			leading.renewed(sent)
			e.mu.Lock()
			e.lastRenew = sent
			e.mu.Unlock()
			lastErr, e.lastLogged = nil, ""
		case err != nil:
			if leading.Err() == nil { // not the watchdog's own cancellation
				lastErr = err
				e.logFailure(err)
			}
		default:
			leading.stop(e.lostTo())
		}
	}
	leading.stop(context.Cause(leading)) // stops the watchdog; the cause is already set
	cause := leading.ownCause()          // nil when Run's ctx ended the term, whatever its cause
	<-returned

	var lost, releaseErr error
	if errors.Is(cause, ErrLost) {
		lost = cause
		if lastErr != nil {
			lost = fmt.Errorf("%w; last attempt: %w", cause, lastErr)
		}
		e.cfg.Logger.Warn("leaderelection: lost", "lease", e.lease(), "err", lost)
	}
	if e.cfg.ReleaseOnCancel {
		if err := e.release(); err != nil {
			releaseErr = fmt.Errorf("leaderelection: releasing the Lease on the way out (the next leader waits it out): %w", err)
			e.cfg.Logger.Warn("leaderelection: release failed", "lease", e.lease(), "err", err)
		}
	}
	e.mu.Lock()
	e.inTerm = false
	e.mu.Unlock()
	e.cfg.Callbacks.OnStoppedLeading()
	return errors.Join(lost, releaseErr)
}

// fence is the fencing number of a term that the write e.observed
// answered has just begun: its resourceVersion as an integer (see
// Term.Fence). It is 0, and said so in the log, when that is no integer.
func (e *Elector) fence() uint64 {
	fence, err := strconv.ParseUint(e.observed.ResourceVersion, 10, 64)
	if err != nil {
		e.cfg.Logger.Warn("leaderelection: the Lease's resourceVersion is not an integer: this term has no fence",
			"lease", e.lease(), "resourceVersion", e.observed.ResourceVersion)
		return 0
	}
	return fence
}

// logFailure logs err unless it repeats the last failure logged: a
// forbidden request every RetryPeriod is reported, but once.
func (e *Elector) logFailure(err error) {
	if err == nil {
		e.lastLogged = ""
		return
	}
	if err.Error() == e.lastLogged {
		return
	}
	e.lastLogged = err.Error()
	e.cfg.Logger.Warn("leaderelection: attempt failed", "lease", e.lease(), "err", err)
}

// jittered is d plus a random part of up to JitterFactor·d.
func jittered(d time.Duration) time.Duration {
	return d + time.Duration(random.Fraction()*JitterFactor*float64(d))
}

func (e *Elector) lease() string { return e.cfg.Namespace + "/" + e.cfg.Name }

// lostTo is the ErrLost of a term that found the Lease another's: it
// names the holder last seen, says it was released, or, when none was
// seen (a create answered AlreadyExists or a release Conflict, the
// Lease then gone or unread: heldByUnknown), says so
// (TestALeaderWhoseReCreateMeetsALeaseGoneAgainDoesNotSayItHoldsIt,
// TestALeaderWhoseLeaseIsReleasedUnderItDoesNotSayAnotherCreatedIt), or
// that its renew met another's write
// (TestALeaderWhoseSlowPathUpdateConflictsDoesNotSayItHoldsTheLease).
func (e *Elector) lostTo() error {
	switch holder := holderOf(e.observed); {
	case e.observed == heldByUnknown:
		return fmt.Errorf("%w: lease %s was created by another candidate, its holder not seen", ErrLost, e.lease())
	case holder == e.cfg.Identity: // its renew met another's write, of the Lease it read as its own
		return fmt.Errorf("%w: lease %s was written by another since this leader read it (409 Conflict)", ErrLost, e.lease())
	case holder == "":
		return fmt.Errorf("%w: lease %s was released", ErrLost, e.lease())
	default:
		return fmt.Errorf("%w: lease %s is held by %q", ErrLost, e.lease(), holder)
	}
}
