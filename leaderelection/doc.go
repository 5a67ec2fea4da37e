// Package leaderelection keeps one replica of a controller active: the
// replicas elect a leader through a coordination.k8s.io/v1 Lease, and
// only the leader runs its informers' workers. The API server is the
// coordinator; no replica talks to another.
//
// # Where it sits
//
// Beside the data flow, not in it: it decides whether this process runs
// the workers that the rest of this module feeds.
//
//	Elector.Run ──GET / create / update (with resourceVersion)──▶ Lease ns/name
//	Elector.Run ──OnStartedLeading(ctx)──▶ your controller: informers, workqueue.Run(ctx, ...)
//
// # Usage
//
//	client, err := leaderelection.NewClient(restConfig) // a client of its own: its own QPS
//	el, err := leaderelection.New(leaderelection.Config{
//		Client: client, Namespace: "kube-system", Name: "my-controller",
//		ReleaseOnCancel: true,
//		Callbacks: leaderelection.Callbacks{
//			OnStartedLeading: func(ctx context.Context) { runController(ctx) }, // returns once ctx ends
//			OnStoppedLeading: func() { log.Print("no longer leading") },
//		},
//	})
//	err = el.Run(ctx) // nil when ctx ended the term and the release landed (or the Lease was gone); wraps ErrLost when leadership was lost
//
// # The protocol
//
// The Lease says who holds it (holderIdentity), since when (acquireTime),
// when it was last renewed (renewTime), for how long a renew counts
// (leaseDurationSeconds) and how often it changed hands since it was
// created (leaseTransitions). Every write carries the resourceVersion
// its writer read, so of two candidates writing at once the API server
// accepts one and answers the other 409 Conflict (or AlreadyExists, when
// both create a missing Lease). A 409 is a lost race, not an error: the
// loser reads the winner's Lease (at once after an AlreadyExists, on its
// next attempt after a Conflict).
//
//   - A standby reads the Lease every RetryPeriod (plus jitter). It takes
//     the Lease when it is free, or when it has not changed for
//     leaseDurationSeconds since this standby first saw its current
//     version.
//   - The leader renews every RetryPeriod. Its leading context ends at its
//     last successful renew plus RenewDeadline, ended by a timer that only
//     a successful renew re-arms: a stalled goroutine cannot extend a term.
//     TermOf(ctx) tells that moving end (Term.End) and the term's fencing
//     number; ctx.Deadline() does not, so that every timeout derived from
//     the term fires at its own time.
//   - A term's fencing number (Term.Fence) is the resourceVersion of the
//     write that began it. The API server orders every write after those
//     before it, a deleted Lease's re-creation too, so each term's fence
//     is greater than every earlier term's, whoever created the Lease.
//     (A leader goes on with its fence below a later term's in one order
//     only, a Lease deleted twice around that term: see Term.Fence.)
//   - A Lease that someone deletes is not free. Its leader may lead until
//     its renew deadline whatever happened to it, so a standby that has
//     seen the Lease at all (held, released, or held by itself as a
//     former leader) waits out the longer of its own LeaseDuration and
//     the one the Lease last named, from when it first saw it absent:
//     the delete came after the leader's last renew,
//     whatever this standby saw last. That holds while every look since
//     found it absent; a look that failed starts the wait afresh, from
//     the next one that finds it absent (meanwhile the leader may have
//     put it back, renewed, and had it deleted again). The price is
//     liveness: a standby whose looks keep failing, once or more every
//     LeaseDuration, never takes a deleted Lease; it does once its looks
//     work for a LeaseDuration. A Lease put back and deleted again
//     between two successful looks (a standby's a RetryPeriod to an
//     attempt and 2.2 RetryPeriods apart, by the jitter of
//     JitterFactor, a leader's up to two attempts and a RetryPeriod; a
//     look further apart counts as failed) is not seen: deleting the
//     Lease over and over can still make two leaders. The leader creates it again on its next
//     renew and goes on. (A standby that never saw the Lease before the
//     delete, because it started after it or every look it took failed,
//     cannot know: it creates it at once, as client-go's would.)
//   - A leader renews only a Lease it still holds: one that changed hands
//     since its last write (taken, or re-created and released by another)
//     ends its term with ErrLost, so no term goes on past a later term's
//     start with its lower fence.
//   - Run waits for OnStartedLeading to return before it releases the
//     Lease (ReleaseOnCancel) or returns, so your work has stopped before
//     a standby is invited to start.
//
// # Clocks
//
// Expiry is judged on each standby's own clock, from the moment it saw
// the Lease change, never from renewTime. renewTime was written by another
// host's clock; comparing it with ours would trust the offset between two
// clocks, which nothing bounds. What remains is the clocks' rate: the
// leader stops at RenewDeadline by its clock, a standby takes over at
// LeaseDuration by its own, measured from later events. So leadership is
// exclusive as long as no clock runs faster than another by more than
// the ratio LeaseDuration/RenewDeadline (15 s/10 s: 1.5×). The cost of
// this rule is that a standby that starts up waits a full LeaseDuration
// even for a Lease whose holder died long ago.
//
// # What it does not guarantee
//
//   - No fencing by the Lease itself. A leader that is deposed
//     (partitioned, paused, slow) may still have writes in flight, and
//     they may land after a new leader started. The Lease protects nothing
//     else in the cluster: make writes idempotent and guarded by
//     resourceVersion, as a controller's should be, or carry Term.Fence
//     with them where a reader can check it (and see Term.Fence for what
//     it assumes).
//   - Exclusivity rests on the timing above and on clock rates within that
//     ratio. A process paused (SIGSTOP, a VM migration) past its renew
//     deadline resumes with its context over, but the code it was running
//     resumes too, until its next look at the context: fencing again.
//   - Callbacks you block: Run cannot stop your code. If OnStartedLeading
//     ignores its context, two leaders can act at once; Healthy then
//     reports the stuck term, for a liveness probe to restart it.
//
// # Permissions
//
// get and update on the Lease, create on leases, in its namespace: Rules
// returns them as RBAC rules. The tests run the elector as a user with
// exactly these.
//
// # Coming from client-go
//
// tools/leaderelection's LeaderElector, LeaderElectionConfig and
// LeaseLock are Elector, Config and the unexported leases; the timing
// rules and JitterFactor are client-go's, and so is judging expiry by the
// local observation time. The differences: Run returns an error instead of
// only logging; Run waits for OnStartedLeading before releasing; the
// leading context's end is a watchdog, and TermOf gives the term's moving
// end and a fencing number (client-go offers none, and its
// leaseTransitions starts again at 0 with a re-created Lease); a standby
// waits out a deleted Lease it has seen (client-go's takes it at once,
// and leads while the deposed leader's term still runs); OnNewLeader
// runs in a goroutine of its own, in order; every wait of the elector's,
// attempt timeouts included, is on Config.Clock (but the client's: its
// rate limiter, and the Retry-After waits of client-go's retries of a
// GET and of the release, keep client-go's clock, cut short by the
// attempt's timeout;
// TestAGetThrottledWithARetryAfterIsRetriedOnTheClientsClockNotConfigClock);
// Check is Healthy; there is no RunOrDie, and no coordinated election
// (see docs/14-leader-election.md).
package leaderelection
