package leaderelection

import (
	"context"
	"fmt"
	"maps"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
)

// attempt is one try to acquire or renew the Lease, bounded by
// AttemptTimeout. held reports whether this candidate holds the Lease
// now; sent is when the successful write was sent. A lost race (409) is
// held == false with no error: someone else wrote first, which is the
// protocol working, not failing.
func (e *Elector) attempt(ctx context.Context, leading bool) (held bool, sent time.Time, err error) {
	ctx, cancel := informer.WithTimeout(ctx, e.cfg.Clock, e.cfg.AttemptTimeout)
	defer cancel()
	held, sent, err = e.tryAcquireOrRenew(ctx, leading)
	e.reportLeader()
	return held, sent, err
}

// tryAcquireOrRenew runs the protocol once. Only Run's goroutine calls it;
// it owns e.observed and e.observedAt.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, leading bool) (bool, time.Time, error) {
	// Fast path: a leader wrote the last version it knows of, so it
	// renews that version in one request. A conflict means someone else
	// wrote since; the slow path below judges what they wrote.
	if leading && holderOf(e.observed) == e.cfg.Identity {
		sent := e.cfg.Clock.Now()
		updated, err := e.leases.update(ctx, e.renewal(e.observed, sent))
		if err == nil {
			e.observe(updated)
			return true, sent, nil
		}
		// A conflict means someone else wrote since, or deleted the
		// Lease (the update carries the UID it read, and a Lease created
		// since has another: kube-apiserver answers 409, not 404, to an
		// update whose UID precondition fails); a NotFound, from a server
		// that does not check it, a deletion too. The slow path below
		// judges both: a deleted Lease is created again, and the term
		// goes on.
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return false, time.Time{}, err
		}
	}

	lookAt := e.cfg.Clock.Now()
	current, err := e.leases.get(ctx)
	if err == nil || apierrors.IsNotFound(err) {
		e.looked(lookAt, leading)
		// What an earlier write did, this look shows: a Lease that names
		// this standby is its own though no term runs, and is released
		// if it leaves before a write of it is answered
		// (TestACandidateLeavingWhileThrottledAfterItsUnansweredCreateLandedReleasesTheLease).
		e.unanswered = !leading && err == nil && holderOf(current) == e.cfg.Identity
	}
	if apierrors.IsNotFound(err) {
		// A Lease this candidate has seen, now absent, is not free: since
		// its last sight, which may be old (its requests may have failed
		// meanwhile), anyone may have taken the Lease, and may lead until
		// its renew deadline whoever deleted it; creating it now could
		// make two leaders. What the last sight said — held by another,
		// by this candidate in a term that has ended, or by no one,
		// released — tells nothing of who holds it since. That holder's
		// last renew came before the delete, and the delete before this
		// candidate first saw the Lease absent: so the wait, of at least
		// this candidate's LeaseDuration, runs from that first sight of
		// its absence, as long as every look since found it absent (a
		// failed look starts it afresh: see lostSight). The holder, meanwhile, creates it again. Only a
		// leader in its term may put back a Lease it holds at once; and a
		// candidate that never saw the Lease creates it (a first start;
		// see the package doc, "A deleted Lease").
		e.sawAbsent()
		if e.cfg.OwnLeaseOnly && !leading && (e.observed != nil || e.createSent) {
			// Its Lease, seen or perhaps created, is gone: whoever
			// deleted it may have taken it first (a sharder collects a
			// dead member's Lease after taking it over), and may have
			// acted on this identity's absence.
			return false, time.Time{}, fmt.Errorf("leaderelection: lease %s was deleted: %w", e.lease(), ErrNotOwnLease)
		}
		if e.observed != nil && !(leading && holderOf(e.observed) == e.cfg.Identity) && !e.absenceWaitedOut() {
			return false, time.Time{}, nil
		}
		sent := e.cfg.Clock.Now()
		created, mayHaveLanded, err := e.leases.create(ctx, e.renewal(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name, Labels: e.cfg.Labels},
		}, sent))
		if mayHaveLanded {
			e.createSent = true // answered or not: never reset
		}
		if apierrors.IsAlreadyExists(err) {
			if e.lookAfterAlreadyExists(ctx) && leading {
				// Its own earlier create, landed late: a failed attempt,
				// not a lost term; the next one renews the Lease
				// (TestALeaderWhoseReCreateIsAnsweredByItsOwnLandedCreateKeepsItsTerm).
				return false, time.Time{}, err
			}
			// Another candidate created it first
			// (TestALeaderWhoseReCreateIsAnsweredByAnotherCandidatesCreateEndsItsTerm).
			return false, time.Time{}, nil
		}
		if err != nil {
			e.unanswered = e.unanswered || (mayHaveLanded && !leading)
			return false, time.Time{}, err
		}
		e.observe(created)
		return true, sent, nil
	}
	if err != nil {
		e.lostSight()
		return false, time.Time{}, err
	}
	e.observe(current)

	holder := holderOf(current)
	if leading && holder != e.cfg.Identity {
		// The Lease changed hands since this leader's last write: another
		// term began (on a Lease deleted and created again, say) and
		// perhaps ended, freeing it. Taking it now would go on with this
		// term's fence, below that term's: this term is over, and a new
		// one, with a new fence, may begin.
		return false, time.Time{}, nil
	}
	if e.cfg.OwnLeaseOnly && holder != e.cfg.Identity {
		return false, time.Time{}, fmt.Errorf("leaderelection: lease %s is held by %q: %w", e.lease(), holder, ErrNotOwnLease)
	}
	if holder != "" && holder != e.cfg.Identity && !e.observedExpired() {
		return false, time.Time{}, nil // held by another, and not expired
	}
	sent := e.cfg.Clock.Now()
	updated, err := e.leases.update(ctx, e.renewal(current, sent))
	if apierrors.IsConflict(err) {
		return false, time.Time{}, nil // another candidate wrote first
	}
	if err != nil {
		e.unanswered = e.unanswered || (!leading && !refused(err))
		return false, time.Time{}, err
	}
	e.observe(updated)
	return true, sent, nil
}

// renewal returns a copy of lease held by this candidate, renewed at now.
// Taking it from another holder (or from none) sets acquireTime and
// counts a transition; renewing our own keeps both. A Lease being
// created starts at zero transitions.
func (e *Elector) renewal(lease *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	out := lease.DeepCopy()
	at := metav1.NewMicroTime(now)
	seconds := int32(e.cfg.LeaseDuration / time.Second)
	if holderOf(lease) != e.cfg.Identity {
		transitions := int32(0)
		if lease.Spec.LeaseTransitions != nil {
			transitions = *lease.Spec.LeaseTransitions
		}
		if lease.ResourceVersion != "" { // an existing Lease changes hands
			transitions++
		}
		out.Spec.AcquireTime = &at
		out.Spec.LeaseTransitions = &transitions
	}
	out.Spec.HolderIdentity = &e.cfg.Identity
	out.Spec.LeaseDurationSeconds = &seconds
	out.Spec.RenewTime = &at
	e.relabel(out)
	return out
}

// relabel puts Config.Labels on lease, a copy about to be written: every
// write carries them, not only the create, so that a reader that finds
// the Lease by a label selector (a sharder polling its ring) finds it
// again after someone stripped them, from this candidate's next write on
// (TestAMemberLeaseStrippedOfItsRingLabelsIsLabelledAgainAndItsObjectsMoveWhenItLeaves).
// Labels of others are kept.
func (e *Elector) relabel(lease *coordinationv1.Lease) {
	if len(e.cfg.Labels) == 0 {
		return
	}
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	maps.Copy(lease.Labels, e.cfg.Labels)
}

// observe records lease as the latest version seen. When its
// resourceVersion differs from the previous observation, observedAt
// restarts: expiry is judged on this host's clock from the moment this
// candidate saw the Lease change, never from the renewTime another host's
// clock wrote (see the package doc, "Clocks").
func (e *Elector) observe(lease *coordinationv1.Lease) {
	if e.observed == nil || e.absent || e.observed.ResourceVersion != lease.ResourceVersion {
		e.observedAt = e.cfg.Clock.Now()
	}
	e.observed, e.absent = lease, false
}

// sawAbsent records that the Lease is absent; the first time since it
// was last seen present, observedAt restarts: absence is a change.
func (e *Elector) sawAbsent() {
	if !e.absent {
		e.absent, e.observedAt = true, e.cfg.Clock.Now()
	}
}

// lostSight records a look that failed: the Lease may have been put back
// and deleted again meanwhile, by a leader that renewed after this
// candidate's first sight of its absence, so that sight no longer bounds
// the last renew. The next absence seen starts the wait afresh.
func (e *Elector) lostSight() {
	e.absent = false
}

// looked records a look at the Lease sent at, answered. A look further
// from the one before than looks are ever spaced (lookSpacing: the
// candidate was paused, or stopped between two Runs) is as a failed
// look: the Lease may have been put back, renewed and deleted again
// meanwhile, unseen, so an absence seen before it bounds nothing now,
// and the wait starts afresh
// (TestAStandbyPausedBetweenTwoLooksWaitsOutADeleteItSawBeforeThePause,
// TestAStandbyThatRunsAgainAfterAGapWaitsOutADeleteItSawBeforeTheGap).
// A Run started again at once keeps its sight
// (TestAStandbyRunAgainAtOnceTakesALeaseDeletedUnderADeadLeader).
func (e *Elector) looked(at time.Time, leading bool) {
	if !e.lastLook.IsZero() && at.Sub(e.lastLook) > e.lookSpacing(e.lastLookLeading && leading) {
		e.lostSight()
	}
	e.lastLook, e.lastLookLeading = at, leading
}

// lookSpacing is the most a look is apart from the one after it, each
// taken as its GET is about to be sent: a standby's at its attempt's
// start, so the next comes one attempt and one jittered wait later; a
// leader's after its fast path's write, so a leader's next comes one
// attempt, a RetryPeriod and one more attempt's write later. looked
// allows the leader's only between two looks of a leader: a standby's
// look, after a term ended too, is held to the standby's
// (TestAFormerLeaderRunAgainAfterAGapLongerThanAStandbysSpacingWaitsOutADeleteItSawAsLeader);
// the larger of the two for all would let a standby's sight outlive a
// pause between the two
// (TestAStandbyPausedLongerThanItsLooksAreSpacedWaitsOutADeleteItSawBeforeThePause,
// TestAStandbyPausedLongerThanAStandbysLooksAreSpacedButWithinALeadersWaitsOutADeleteItSawBeforeThePause).
func (e *Elector) lookSpacing(leading bool) time.Duration {
	if leading {
		return 2*e.cfg.AttemptTimeout + e.cfg.RetryPeriod
	}
	return e.cfg.AttemptTimeout + time.Duration((1+JitterFactor)*float64(e.cfg.RetryPeriod))
}

// observedExpired reports whether the observed Lease has gone
// unchanged for its leaseDurationSeconds (or our LeaseDuration, if it
// names none) since this candidate first saw that version.
func (e *Elector) observedExpired() bool {
	d := e.cfg.LeaseDuration
	if s := e.observed.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		d = time.Duration(*s) * time.Second
	}
	return e.cfg.Clock.Now().After(e.observedAt.Add(d))
}

// absenceWaitedOut reports whether the Lease has been absent, as this
// candidate saw it, for the longer of its own LeaseDuration and the last
// version's leaseDurationSeconds: a released Lease names one second,
// which says nothing of the duration of whoever took it since.
func (e *Elector) absenceWaitedOut() bool {
	d := e.cfg.LeaseDuration
	if s := e.observed.Spec.LeaseDurationSeconds; s != nil {
		d = max(d, time.Duration(*s)*time.Second)
	}
	return e.cfg.Clock.Now().After(e.observedAt.Add(d))
}

// reportLeader hands the observed holder to OnNewLeader when it changed.
func (e *Elector) reportLeader() {
	holder := holderOf(e.observed)
	if e.observed == nil || e.observed == heldByUnknown || holder == e.reported {
		return
	}
	e.reported = holder
	e.cfg.Logger.Info("leaderelection: new leader observed", "lease", e.lease(), "holder", holder)
	e.leaders.notify(holder)
}

// lookAfterAlreadyExists reads the Lease a create of this candidate's
// was just answered AlreadyExists for, and reports whether it names this
// candidate: for a leader, only its own create, landed late, can have
// made it since the delete it saw. The answer is a sight of the Lease,
// present: whoever put it back may lead until its renew deadline, so
// what this candidate saw of its absence bounds nothing any more, and a
// wait for it starts afresh from the next absence seen
// (TestAStandbyWhoseCreateIsAnsweredAlreadyExistsWaitsAgainForALeaseDeletedAgain).
// A Lease gone again, or not read, is recorded as seen held by someone
// unknown (heldByUnknown), so that even a candidate that never saw it
// before waits.
func (e *Elector) lookAfterAlreadyExists(ctx context.Context) bool {
	current, err := e.leases.get(ctx)
	if err != nil {
		e.sawHeldByUnknown(err)
		return false
	}
	e.observe(current)
	return holderOf(current) == e.cfg.Identity
}

// sawHeldByUnknown records a Lease seen held, by whom not known (a
// create's AlreadyExists, a release's Conflict), whose next read failed
// with err: as heldByUnknown, and, if err says it is gone again, as
// absent from now on.
func (e *Elector) sawHeldByUnknown(err error) {
	e.observe(heldByUnknown)
	if apierrors.IsNotFound(err) {
		e.sawAbsent()
	}
}

// heldByUnknown stands for a Lease seen held, by whom and for how long
// not known: a create's AlreadyExists or a release's Conflict, the
// Lease gone or unreadable by the next look. It is not a released Lease (holder ""): OnNewLeader is
// not told of it (TestAStandbyWhoseCreateIsAnsweredAlreadyExistsDoesNotReportTheLeaseReleased),
// and ErrLost says so (lostTo). Nothing writes it: every write starts
// from a Lease naming this candidate.
var heldByUnknown = &coordinationv1.Lease{}

// holderOf is the Lease's holder, "" for none (or no Lease).
func holderOf(lease *coordinationv1.Lease) string {
	if lease == nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
