package sharedinformer

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Syncer is anything whose cache, or view of one, becomes synced once: an
// Informer (its cache holds the first full list) or a Registration (its
// handler has received that list).
type Syncer interface {
	// Synced returns a channel that is closed once synced.
	Synced() <-chan struct{}
}

// releasable is a syncer that its factory may release before it syncs:
// an Informer, or the Registration of a handler on one. Once released it
// will never sync, and nobody holds it, so sync waits skip it.
type releasable interface {
	// releasedSignal is closed once the last holder released it; nil
	// never is.
	releasedSignal() <-chan struct{}
}

// released is s's releasedSignal, or nil (never closed) for a syncer that
// cannot be released.
func released(s Syncer) <-chan struct{} {
	if r, ok := s.(releasable); ok {
		return r.releasedSignal()
	}
	return nil
}

// reporter is what an Informer and a Registration tell a failed sync wait:
// what they are, and the last failure on the way to syncing (nil if none).
type reporter interface {
	syncStatus() (name string, lastFailure error)
}

// WaitForCacheSync blocks until every syncer has synced, and returns nil;
// or until ctx ends, and returns a *NotSyncedError naming each syncer not
// synced yet and why, as far as it is known.
//
// Start workers only after it returns nil (pitfall 4): before that, a
// worker reading through a lister sees a partial cache, and would, say,
// create objects that already exist. It waits on channels, so it returns
// as soon as the last syncer is done; there is no polling interval.
//
// An informer of a Factory released by its last holder (see Release),
// and each of its handlers' Registrations, is not waited for: it will
// never sync, and nobody holds it. A release during the wait ends that
// syncer's part of the wait at once; the handler's Registration.Err says
// ErrInformerReleased.
//
// It has no timeout of its own: ctx alone bounds it, so give it a ctx with
// a deadline. An informer that cannot list waits forever, since what it
// lacks may come later: a 403 from RBAC is retried until access is
// granted, and a resource not served (a CRD not installed) is asked about
// through discovery, with no LIST or WATCH, until it is installed (for
// an informer with Options.Served, as every Factory's has; without it the
// 404 is retried like a 403). Only a deadline turns that into an error you
// see, which names the informer and its last failure
// (reflector.ErrNotServed, say). [Factory.WaitForCacheSync] is this function with a default bound:
// it also stops after FactoryOptions.SyncTimeout (2 minutes unless set).
func WaitForCacheSync(ctx context.Context, syncers ...Syncer) error {
	if err := checkSyncers("WaitForCacheSync", syncers); err != nil {
		return err
	}
	start := time.Now()
	for _, s := range syncers {
		select {
		case <-s.Synced():
		case <-released(s):
		case <-ctx.Done():
			if err := notSynced(ctx.Err(), time.Since(start), syncers); err != nil {
				return err
			}
			return nil // every syncer synced just as ctx ended
		}
	}
	return nil
}

// NotSyncedError is WaitForCacheSync's answer when its context ended
// first. errors.Is(err, context.DeadlineExceeded) tells a timeout, and
// errors.As finds each pending syncer's last failure, such as the API
// server's 403 (apierrors.IsForbidden(err) is true then).
type NotSyncedError struct {
	// Waited is how long the wait lasted.
	Waited time.Duration
	// Pending are the syncers not synced when the wait ended.
	Pending []PendingSync
	// Cause is why the wait ended: ctx.Err().
	Cause error
}

// PendingSync is one syncer a sync wait gave up on.
type PendingSync struct {
	// Name says what it is: an informer's Name ("configmaps in namespace
	// shop, labels app=web"), or "handler NAME of " that name.
	Name string
	// LastFailure is the informer's latest failure to list or watch; nil
	// when there was none (the list is merely slow, or not started). It
	// stays after the informer recovers: a resource served again whose
	// first LIST is slow still reports the ErrNotServed that came before.
	LastFailure error
}

// Error reads, for one pending informer, "configmaps in namespace x: not
// synced after 30s: <its last failure>" ("not synced yet" from Ready,
// which does not wait); several are joined with "; ".
func (e *NotSyncedError) Error() string {
	parts := make([]string, 0, len(e.Pending))
	for _, p := range e.Pending {
		why := "no failure seen (still listing, or never started)"
		if p.LastFailure != nil {
			why = p.LastFailure.Error()
		}
		state := fmt.Sprintf("not synced after %v", e.Waited.Round(time.Millisecond))
		if e.Cause == ErrNotSynced {
			state = ErrNotSynced.Error()
		}
		parts = append(parts, fmt.Sprintf("%s: %s: %s", p.Name, state, why))
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the cause and every pending syncer's last failure.
func (e *NotSyncedError) Unwrap() []error {
	errs := []error{e.Cause}
	for _, p := range e.Pending {
		if p.LastFailure != nil {
			errs = append(errs, p.LastFailure)
		}
	}
	return errs
}

// notSynced builds the error for the syncers not synced after waited.
func notSynced(cause error, waited time.Duration, syncers []Syncer) *NotSyncedError {
	e := &NotSyncedError{Waited: waited, Cause: cause}
	for i, s := range syncers {
		select {
		case <-s.Synced():
			continue
		case <-released(s):
			continue
		default:
		}
		p := PendingSync{Name: fmt.Sprintf("syncer %d (%T)", i, s)}
		if r, ok := s.(reporter); ok {
			p.Name, p.LastFailure = r.syncStatus()
		}
		e.Pending = append(e.Pending, p)
	}
	if len(e.Pending) == 0 { // all synced just as ctx ended
		return nil
	}
	return e
}
