package leaderelection

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
)

// release gives the Lease up at the end of a term, if this candidate
// still holds it: holder cleared, so a standby takes it on its next
// attempt without waiting for expiry. Run's context is done by now, so
// release writes with a fresh one, bounded by AttemptTimeout. It only
// runs after OnStartedLeading has returned: a standby may start at once,
// and this candidate's work must have stopped first.
func (e *Elector) release() error {
	ctx, cancel := informer.WithTimeout(context.Background(), e.cfg.Clock, e.cfg.AttemptTimeout)
	defer cancel()
	return e.releaseWithin(ctx)
}

// releaseWithin is release, its requests bounded by ctx.
func (e *Elector) releaseWithin(ctx context.Context) error {
	// What the release wrote ("") or read is told to OnNewLeader, before
	// Run stops the notifier (TestALeaderThatReleasesTheLeaseIsToldItWasReleased).
	defer e.reportLeader()
	for tries := 0; ; tries++ {
		if holderOf(e.observed) != e.cfg.Identity {
			return nil // not ours to release
		}
		if tries == 2 { // a conflict (a renew that landed after its timeout, say) earns one more try, not two
			return fmt.Errorf("leaderelection: the Lease %s changed under the release twice and still names %s: not released", e.lease(), e.cfg.Identity)
		}
		released := e.observed.DeepCopy()
		now := metav1.NewMicroTime(e.cfg.Clock.Now())
		one := int32(1) // for readers that look at the duration before the holder
		released.Spec.HolderIdentity = nil
		released.Spec.LeaseDurationSeconds = &one
		released.Spec.RenewTime = &now
		e.relabel(released)
		updated, err := e.leases.release(ctx, released)
		if err == nil {
			e.observe(updated)
			e.cfg.Logger.Info("leaderelection: released", "lease", e.lease())
			return nil
		}
		if apierrors.IsNotFound(err) { // from a server that does not check the UID: deleted
			e.releasedGone(err)
			return nil // nobody holds a Lease that is gone: nothing to give up
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		current, err := e.leases.get(ctx)
		if err != nil {
			// The 409 was a sight of the Lease, written since: what this
			// candidate saw of its absence bounds nothing now
			// (TestAFormerLeaderWhoseReleaseMeetsALeasePutBackAndDeletedAgainWaitsAfresh).
			if apierrors.IsNotFound(err) {
				// Deleted: nothing of this candidate's is left to give up
				// (TestAReleaseThatFindsTheLeaseDeletedIsNoError).
				e.releasedGone(err)
				return nil
			}
			e.sawHeldByUnknown(err)
			return err
		}
		e.observe(current)
	}
}

// releasedGone records a release that found the Lease deleted: seen
// held by someone unknown, as any absence after a sight of it is (see
// sawHeldByUnknown), and told to OnNewLeader as "" (no holder), so that a
// caller tracking the leader does not go on believing this candidate
// leads (TestALeaderWhoseReleaseFindsTheLeaseDeletedIsNotLeftNamedLeader).
func (e *Elector) releasedGone(err error) {
	e.sawHeldByUnknown(err)
	if e.reported != "" {
		e.reported = ""
		e.leaders.notify("")
	}
}

// releaseUnanswered gives up, as a candidate leaving before it led, a
// Lease that its last write may have made its own though no answer said
// so (a create or update that landed, its answer lost): no term of its
// runs, so a standby may start at once rather than wait out a
// LeaseDuration for a candidate that left
// (TestACandidateLeavingWhileItsAcquiringWriteLandedUnansweredReleasesTheLease).
// The read and the release are one release, bounded together by one
// AttemptTimeout
// (TestALeavingCandidatesReadAndReleaseAreBoundedByOneAttemptTimeout).
func (e *Elector) releaseUnanswered() {
	ctx, cancel := informer.WithTimeout(context.Background(), e.cfg.Clock, e.cfg.AttemptTimeout)
	defer cancel()
	current, err := e.leases.get(ctx)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			e.cfg.Logger.Warn("leaderelection: could not read the Lease on the way out, to release it if a write that went unanswered made it ours; if it did, a standby waits out its LeaseDuration", "lease", e.lease(), "err", err)
		}
		return
	}
	if holderOf(current) != e.cfg.Identity {
		return
	}
	e.observe(current)
	if err := e.releaseWithin(ctx); err != nil {
		e.cfg.Logger.Warn("leaderelection: releasing a Lease acquired unanswered on the way out failed", "lease", e.lease(), "err", err)
	}
}
