package sharding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/random"
	"github.com/listwatch/informer/leaderelection"
)

// MemberConfig describes one replica's membership in a ring.
type MemberConfig struct {
	// Client talks to coordination.k8s.io/v1: build it with
	// leaderelection.NewClient, so renews have a rate limiter of their
	// own. Required.
	Client *rest.RESTClient
	// Namespace holds the shard Leases. Required.
	Namespace string
	// Ring names the ring; the sharder must use the same. Required.
	Ring string
	// Name names the replica, a DNS label of at most 50 characters. Each
	// term's member id is Name, a dash and 8 random hex digits. Required.
	Name string

	// LeaseDuration, RenewDeadline and RetryPeriod time the shard Lease
	// as they time a leader's (see leaderelection.Config; defaults 15 s,
	// 10 s, 2 s). The sharder judges a member dead LeaseDuration after
	// its Lease last changed; the member stops at its last renew plus
	// RenewDeadline, earlier.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// Run is the replica's work for one term: start informers scoped
	// with shard.Selector(), run workers, and return soon after ctx
	// ends. ctx ends when Member.Run's context does, or at the last
	// successful renew plus RenewDeadline. A Run that returns sooner
	// (its informer could not sync, say) ends the term: the Lease is
	// released and the member joins again under a new id. Required.
	Run func(ctx context.Context, shard Shard)
	// MaxRejoinBackoff caps the wait before joining again after a term
	// that Run ended, by returning, sooner than this: the wait doubles
	// from RetryPeriod with each such term in a row, and is RetryPeriod
	// again after any other term (a join that began no term is none: it
	// waits RetryPeriod and keeps the backoff). Every term is a join and a
	// leave that the sharder answers by moving objects, so a Run that
	// gives up at once, every term, must not rejoin at once. Default: 30
	// seconds.
	MaxRejoinBackoff time.Duration
	// Logger receives terms starting and ending. Default: slog.Default().
	Logger *slog.Logger
	// Clock times the Lease and the wait before rejoining. Default:
	// informer.RealClock.
	Clock informer.Clock
}

// Member is one replica's membership: it holds a shard Lease of its own
// for as long as it can renew it, and runs MemberConfig.Run meanwhile.
type Member struct {
	cfg MemberConfig
	// running is set while Run runs: a Member holds one term at a time.
	running atomic.Bool
}

// NewMember validates cfg and returns a Member. A *ConfigError or a
// *leaderelection.ConfigError names what is wrong.
func NewMember(cfg MemberConfig) (*Member, error) {
	if err := validateRing(cfg.Ring); err != nil {
		return nil, err
	}
	if errs := validation.IsDNS1123Label(cfg.Name); len(errs) > 0 || len(cfg.Name) > 50 {
		return nil, &ConfigError{Field: "Name", Reason: fmt.Sprintf("(%q) must be a DNS label of at most 50 characters", cfg.Name)}
	}
	if cfg.Run == nil {
		return nil, &ConfigError{Field: "Run", Reason: "is nil"}
	}
	if cfg.MaxRejoinBackoff < 0 {
		return nil, &ConfigError{Field: "MaxRejoinBackoff", Reason: fmt.Sprintf("(%v) must not be negative", cfg.MaxRejoinBackoff)}
	}
	cfg.MaxRejoinBackoff = durationOr(cfg.MaxRejoinBackoff, 30*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Clock = informer.ClockOrReal(cfg.Clock)
	m := &Member{cfg: cfg}
	if _, err := m.elector(cfg.Name+"-00000000", func() {}, &termEnd{}); err != nil { // the timing and the client, checked once
		return nil, err
	}
	return m, nil
}

// Run is the replica's life in the ring, one term after another, until
// ctx ends. A term begins when the member creates its Lease and ends
// when it cannot renew it, or MemberConfig.Run returns (or ctx ends);
// then Run waits RetryPeriod and joins again as a new member, with a new
// id and a new Lease. After a term that Run itself ended (it returned
// while the term lasted) in less than MaxRejoinBackoff, the wait is
// twice the last one instead, up to MaxRejoinBackoff, so that a Run that
// gives up every term does not have the sharder move objects to it and
// back every RetryPeriod
// (TestAMemberWhoseTermsEndAtOnceRejoinsAfterAGrowingBackoff). An id is
// never reused: the sharder may have moved the old id's objects without
// asking, and nothing may reconcile under that id again. That holds for
// an id that never began a term too: its create may have landed though
// its answer was lost, the sharder counted it alive, then took its
// Lease over, and may have deleted it since; an id that finds its Lease
// held by another, released, or gone after it sent its create, joins
// again under a new one
// (TestAMemberIDWhoseLeaseASharderTookOverNeverStartsATerm,
// TestAMemberIDWhoseTakenOverLeaseWasCollectedNeverStartsATerm). Run
// returns nil when ctx ends; an error at once if another Run of this
// Member is running, which would be a second member in this replica,
// with MemberConfig.Run called for both at once
// (TestASecondRunOfOneMemberIsRefusedAndStartsNoSecondTerm).
func (m *Member) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("sharding: Run is already running on this Member")
	}
	defer m.running.Store(false)
	var backoff time.Duration // after terms Run gave up early, in a row; 0 if the last was none
	for ctx.Err() == nil {
		id, err := newMemberID(m.cfg.Ring, m.cfg.Name)
		if err != nil {
			return err
		}
		// A Run that returns before the term ends ends the term: nothing
		// reconciles under id any more, so its Lease must not say alive
		// (TestAMemberWhoseRunReturnsBeforeItsTermEndsLetsItsLeaseGo).
		term, endTerm := context.WithCancel(ctx)
		var ended termEnd
		el, err := m.elector(id, endTerm, &ended)
		if err != nil {
			endTerm()
			return err
		}
		err = el.Run(term) // ended is set by now, if the term began: OnStartedLeading has returned
		endTerm()
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		wait, backoff = m.rejoinWait(backoff, ended)
		if ended.began.IsZero() {
			m.cfg.Logger.Warn("sharding: member never began its term; joining again as a new member", "member", id, "in", wait, "err", err)
		} else {
			m.cfg.Logger.Warn("sharding: member term ended; joining again as a new member", "member", id, "in", wait, "err", err)
		}
		informer.Sleep(ctx, m.cfg.Clock, wait)
	}
	return nil
}

// termEnd is how a term ended, as the next join's wait depends on it.
type termEnd struct {
	began  time.Time     // when the term began; zero if it never did
	gaveUp bool          // MemberConfig.Run returned while the term lasted
	lasted time.Duration // from the term's start until Run returned, if it gave up
}

// rejoinWait returns the wait before the next join, and the backoff to
// carry to the one after, given the backoff so far and how the term
// ended. After a term that MemberConfig.Run ended by returning less
// than MaxRejoinBackoff after the term began, the backoff is RetryPeriod
// the first time and doubles with each such term in a row, up to
// MaxRejoinBackoff, and the wait is that backoff (never less than
// RetryPeriod). After any other term (a lost renew, a cut-off replica's)
// the wait is RetryPeriod and the backoff starts over. A join that began
// no term (its id found its Lease gone or another's) is no term: the wait
// is RetryPeriod and the backoff stays, so failed joins between give-ups
// do not start it over
// (TestAJoinThatNeverBeganATermDoesNotStartTheRejoinBackoffOver).
func (m *Member) rejoinWait(backoff time.Duration, ended termEnd) (wait, next time.Duration) {
	retry := m.retryPeriod()
	if ended.began.IsZero() {
		return retry, backoff
	}
	if !ended.gaveUp || ended.lasted >= m.cfg.MaxRejoinBackoff {
		return retry, 0
	}
	next = retry
	if backoff > 0 {
		next = min(2*backoff, m.cfg.MaxRejoinBackoff)
	}
	return max(next, retry), next
}

// elector is the Elector of member id's Lease: its only candidate.
// ReleaseOnCancel empties the Lease when the term ends, after Run
// returned, so the sharder moves its objects at once instead of after
// LeaseDuration. endTerm ends the term once Run has returned, early or
// not; ended records how the term went.
func (m *Member) elector(id string, endTerm context.CancelFunc, ended *termEnd) (*leaderelection.Elector, error) {
	shard := Shard{Ring: m.cfg.Ring, Member: id, RequestTimeout: requestTimeout(m.cfg.RenewDeadline), Clock: m.cfg.Clock}
	return leaderelection.New(leaderelection.Config{
		Client: m.cfg.Client, Namespace: m.cfg.Namespace, Name: LeaseName(m.cfg.Ring, id), Identity: id,
		Labels:        leaseLabels(m.cfg.Ring, id),
		LeaseDuration: m.cfg.LeaseDuration, RenewDeadline: m.cfg.RenewDeadline, RetryPeriod: m.cfg.RetryPeriod,
		ReleaseOnCancel: true,
		OwnLeaseOnly:    true, // a Lease a sharder took over, or that was released, is the id's end
		Logger:          m.cfg.Logger,
		Clock:           m.cfg.Clock,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				ended.began = m.cfg.Clock.Now()
				m.cfg.Logger.Info("sharding: member term started", "member", id)
				defer endTerm()
				m.cfg.Run(ctx, shard)
				ended.gaveUp = ctx.Err() == nil
				ended.lasted = m.cfg.Clock.Now().Sub(ended.began) // not the release after it, which may hang
			},
			OnStoppedLeading: func() { m.cfg.Logger.Info("sharding: member term stopped", "member", id) },
		},
	})
}

func (m *Member) retryPeriod() time.Duration {
	if m.cfg.RetryPeriod == 0 {
		return 2 * time.Second
	}
	return m.cfg.RetryPeriod
}

// newMemberID is name, a dash and 8 random hex digits.
func newMemberID(ring, name string) (string, error) {
	token, err := random.Token(ring+"/"+name, 4)
	if err != nil {
		return "", err
	}
	return name + "-" + token, nil
}
