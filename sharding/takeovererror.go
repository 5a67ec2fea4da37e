package sharding

// What a takeover that failed tells, and when its member is judged
// again.

import (
	"context"
	"errors"
	"net/http"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	informer "github.com/listwatch/informer"
)

// afterError judges a takeover of suspect s, written as held by by,
// whose write was answered err: not a 409, 404 or AlreadyExists, which
// say the Lease changed. It is not sent again before a request timeout
// has passed, or the Retry-After the answer asked for if longer, up to
// the Lease's duration
// (TestATakeoverThrottledWithARetryAfterIsNotSentAgainBeforeIt): a
// server that sheds load is not asked again four times a RetryPeriod.
// A refusal (a 4xx: the server did not act) leaves s a suspect. Any
// other error (a 5xx, a timeout, a cut) may come after the write landed,
// so the Lease is read by name: held by by, the takeover landed and is
// recorded as written (reported taken); at the version judged (or still
// absent), it had not landed when read, and s stays a suspect, polls or
// no polls (TestAMemberWhoseTakeoverFailedIsTakenOverThoughThePollsFailAfter);
// changed, or unreadable, s waits for a poll sent after this (refuse).
// Sent again without that read, a takeover that landed would meet itself
// (409), and its member would count as found alive
// (TestATakeoverThatLandedButWasAnsweredAnErrorIsCountedAsTaken). A
// write that lands after its read (one that timed out in the client, not
// yet in the server), and one whose read failed, count under neither
// result when a poll finds the Lease taken over, and the member dead for
// certain, before the takeover may be sent again
// (TestATakeoverThatLandsAfterItsReadBackIsFoundByAPollAndCountedUnderNeitherResult).
// Nothing orders the two: a poll is sent 1 to 2.2 RetryPeriods after the
// last was answered, and may take up to a request timeout itself, so
// with long RetryPeriods, or polls failing or slow, the takeover is
// sent again first, meets itself, and counts as alive; the next poll
// that lists the Lease then finds the member dead for certain.
func (m *members) afterError(ctx context.Context, s suspect, by string, err error) (bool, error) {
	m.waitBeforeRetry(s.id, err)
	if refusedBeforeActing(err) {
		return false, err
	}
	rctx, cancel := informer.WithTimeout(ctx, m.clock, m.timeout)
	defer cancel()
	lease, readErr := m.read(rctx, s.id)
	switch {
	case readErr != nil:
		m.refuse(s.id)
	case lease != nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == by:
		m.wrote(s.id, lease)
		return true, nil
	case !sameVersion(s.judged.lease, lease):
		m.refuse(s.id)
	}
	return false, err
}

// waitBeforeRetry has member id's takeover not sent again before the
// request timeout has passed, or the Retry-After err carries if longer,
// up to the Lease's duration: a dead member's objects wait for a server
// that asks for more no longer than for one more expiry
// (TestATakeoverThrottledForLongerThanItsLeaseIsSentAgainAfterItsDuration).
func (m *members) waitBeforeRetry(id string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.leases[id]
	if !ok {
		return
	}
	wait := m.timeout
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok {
		wait = max(wait, min(time.Duration(seconds)*time.Second, o.duration))
	}
	o.retryAt = m.clock.Now().Add(wait)
	m.leases[id] = o
}

// sameVersion reports whether two sights of a Lease are one version:
// both absent, or both there at one resourceVersion.
func sameVersion(a, b *coordinationv1.Lease) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.ResourceVersion == b.ResourceVersion
}

// refusedBeforeActing reports whether err is the API server's answer that
// it did not act on the request: a 4xx other than a 408 timeout.
func refusedBeforeActing(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}

// refuse marks a takeover of member id that found its Lease changed, or
// could not tell: it is not a suspect again until a poll sent after this
// answers (see members.refused).
func (m *members) refuse(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.refused[id] = m.writes
}
