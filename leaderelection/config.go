package leaderelection

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
)

// JitterFactor spreads a candidate's attempts to acquire: after a failed
// attempt it waits RetryPeriod plus a random part of up to
// JitterFactor·RetryPeriod, so standbys that started together do not ask
// in lockstep. It is client-go's value. A leader renews every RetryPeriod
// exactly: it has no one to fall out of step with.
const JitterFactor = 1.2

// Config describes one candidate for one Lease. Zero durations take the
// defaults of kube-controller-manager (15 s, 10 s, 2 s).
type Config struct {
	// Client talks to coordination.k8s.io/v1; build it with NewClient.
	// Give the elector a client of its own, so that a controller busy
	// with its own requests cannot hold a renew behind its rate limiter.
	// Required.
	Client *rest.RESTClient
	// Namespace and Name name the Lease: a namespace name (a DNS label)
	// and a DNS subdomain, as the API server requires, or New fails
	// (the API server would refuse the Lease on every attempt). Required.
	Namespace, Name string
	// Labels are written on the Lease with every write of this
	// candidate's (create, renew, release), so that a reader can find a
	// family of Leases by a label selector (package sharding finds a
	// ring's member Leases so), even after someone removed them. Other
	// labels on the Lease are kept. Each must be a label the API server
	// accepts, or New fails. Optional.
	Labels map[string]string
	// Identity is what this candidate writes as the Lease's holder. It
	// must differ between candidates: two candidates with one identity
	// both believe they lead. Default: the hostname, an underscore and
	// 16 random hex digits, new for every Elector.
	Identity string

	// LeaseDuration is the term a leader writes into the Lease it holds
	// (leaseDurationSeconds): how long a standby waits, from the moment
	// it saw the Lease last change, before taking it over. A standby
	// waits the duration the Lease names, its own only when the Lease
	// names none; a Lease it saw absent, at least its own (see the
	// package doc). A whole number of seconds (the Lease stores
	// seconds). Default: 15 s.
	LeaseDuration time.Duration
	// RenewDeadline is how long a leader keeps leading without a
	// successful renew: its leading context ends at the last successful
	// renew plus RenewDeadline. Less than LeaseDuration. Default: 10 s.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between two attempts, to acquire or to
	// renew. RenewDeadline must exceed JitterFactor·RetryPeriod.
	// Default: 2 s.
	RetryPeriod time.Duration
	// AttemptTimeout bounds each attempt (a GET, a create or update, or
	// both) and the release. At most RenewDeadline. Default:
	// RenewDeadline/2, so a hung request leaves time for another.
	AttemptTimeout time.Duration

	// ReleaseOnCancel gives the Lease up when a term ends, once
	// OnStartedLeading has returned, so a standby takes over on its next
	// attempt — within one jittered wait and two attempts, under
	// RetryPeriod·(1+JitterFactor) + 2·AttemptTimeout — instead of after
	// a LeaseDuration. The release is written with
	// a context of its own (the caller's is done by then), bounded by
	// AttemptTimeout. A candidate whose context ends before it led
	// releases too a Lease its last write, unanswered (a create or update
	// that may have landed), made its own: it reads the Lease first, and
	// the read and the release together are bounded by one
	// AttemptTimeout. Default: off (the Lease expires).
	ReleaseOnCancel bool
	// OwnLeaseOnly makes the Lease this Identity's alone, as a sharding
	// member's Lease is its id's: the candidate creates it once, or
	// renews it while it holds it (a create that timed out on its side
	// yet landed included), but never takes a Lease held by another
	// identity, or by none (released), expired or not, and, out of a
	// term, never creates again a Lease it saw, or sent a create of that
	// may have landed, that has since been deleted. A create may have
	// landed unless the server refused it (a 4xx but 408 and 409, the
	// answer to that one POST: client-go does not retry it) or it never
	// left the client (it waited in the client's rate limiter, which
	// the elector waits for itself, when the attempt ended); every other
	// failure may have landed. Finding one
	// before it leads, Run returns an error
	// wrapping ErrNotOwnLease: whoever wrote or deleted it may have acted
	// on this identity's absence (a sharder moves a dead member's objects
	// without asking, then deletes its Lease), and the identity must not
	// lead again; stand again under a new Identity. A leader that finds
	// its Lease taken loses its term (ErrLost), as any leader does, and a
	// Run after that, or after a term whose Lease it released, returns
	// ErrNotOwnLease. Default: off (an expired or released Lease is free
	// to take).
	OwnLeaseOnly bool
	// HealthTolerance is how long past LeaseDuration without a renew
	// Healthy still reports a leader healthy. Default: 0.
	HealthTolerance time.Duration

	// Callbacks are what the elector calls as terms start and end.
	Callbacks Callbacks
	// Clock gives the time and the timers. Default: informer.RealClock,
	// also for a nil pointer held in it (informer.ClockOrReal).
	Clock informer.Clock
	// Logger receives acquisitions, losses, releases, new leaders, and
	// each failed attempt whose error differs from the previous one's.
	// Default: slog.Default().
	Logger *slog.Logger
}

// Callbacks are called by Run, in Run's goroutine unless said otherwise.
type Callbacks struct {
	// OnStartedLeading runs in a goroutine of its own when a term starts.
	// ctx ends when the term does: Run's ctx is cancelled, the Lease was
	// taken, or the renew deadline passed. TermOf(ctx) gives the term:
	// its moving end (the last successful renew plus RenewDeadline) and
	// its fencing number. ctx.Deadline() is Run's ctx's, never the moving
	// end, so timeouts derived from ctx fire at their own time. It must
	// return soon after ctx ends: Run waits for it before releasing the
	// Lease and returning. Returning sooner does not end the term, as in
	// client-go: the candidate goes on renewing, and Healthy reports it
	// healthy, with no work running (a caller may start goroutines and
	// return; TestAnOnStartedLeadingThatReturnsAtOnceDoesNotEndTheTerm).
	// Cancel Run's ctx to end the term; sharding.Member does so for its
	// Run. Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once at the end of each term, after
	// OnStartedLeading returned and after any release. Required.
	OnStoppedLeading func()
	// OnNewLeader is called when the holder this candidate observes
	// changes, this candidate included; "" means the Lease was released
	// (or, told by a leader whose release found it deleted, is gone).
	// It is told the holder an attempt (or a release) ends with, not each
	// holder seen within one, as client-go's is: a Lease seen released and
	// taken in the same attempt is told as taken, never as released
	// (TestAStandbyThatTakesAReleasedLeaseInOneAttemptIsToldOfItselfNotOfTheRelease).
	// It runs in a goroutine of its own, one call at a time, in the order
	// observed, so a slow callback delays no renew; Run returns after its
	// last call. Optional.
	OnNewLeader func(identity string)
}

// ConfigError is a Config that New rejects. Field names the field.
type ConfigError struct {
	Field  string
	Reason string
}

// Error says which field is wrong and why.
func (e *ConfigError) Error() string {
	return "leaderelection: Config." + e.Field + " " + e.Reason
}

// withDefaults returns c with every zero value replaced by its default.
func (c Config) withDefaults() (Config, error) {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = 15 * time.Second
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = 10 * time.Second
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = 2 * time.Second
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = c.RenewDeadline / 2
	}
	if c.Identity == "" {
		id, err := newIdentity()
		if err != nil {
			return c, err
		}
		c.Identity = id
	}
	c.Clock = informer.ClockOrReal(c.Clock)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// validate checks a Config that has its defaults.
func (c Config) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	for _, d := range []struct {
		field string
		value time.Duration
	}{{"RenewDeadline", c.RenewDeadline}, {"RetryPeriod", c.RetryPeriod}, {"AttemptTimeout", c.AttemptTimeout}, {"HealthTolerance", c.HealthTolerance}} {
		if d.value < 0 {
			return bad(d.field, "(%v) must not be negative", d.value)
		}
	}
	switch {
	case c.Client == nil:
		return bad("Client", "is nil: build one with NewClient")
	case c.Namespace == "":
		return bad("Namespace", "is empty")
	case len(validation.IsDNS1123Label(c.Namespace)) > 0:
		// The API server would refuse the Lease (422, or 404 for a
		// namespace that cannot exist) on every attempt.
		return bad("Namespace", "(%q) is not a namespace name: %s", c.Namespace, strings.Join(validation.IsDNS1123Label(c.Namespace), "; "))
	case c.Name == "":
		return bad("Name", "is empty")
	case len(validation.IsDNS1123Subdomain(c.Name)) > 0:
		return bad("Name", "(%q) cannot name a Lease: %s", c.Name, strings.Join(validation.IsDNS1123Subdomain(c.Name), "; "))
	case c.LeaseDuration < time.Second || c.LeaseDuration%time.Second != 0:
		return bad("LeaseDuration", "(%v) must be a whole number of seconds: the Lease stores seconds", c.LeaseDuration)
	case c.LeaseDuration <= c.RenewDeadline:
		return bad("LeaseDuration", "(%v) must be greater than RenewDeadline (%v)", c.LeaseDuration, c.RenewDeadline)
	case float64(c.RenewDeadline) <= JitterFactor*float64(c.RetryPeriod):
		return bad("RenewDeadline", "(%v) must be greater than JitterFactor×RetryPeriod (%v×%v)",
			c.RenewDeadline, JitterFactor, c.RetryPeriod)
	case c.AttemptTimeout > c.RenewDeadline:
		return bad("AttemptTimeout", "(%v) must not exceed RenewDeadline (%v)", c.AttemptTimeout, c.RenewDeadline)
	case c.Callbacks.OnStartedLeading == nil:
		return bad("Callbacks.OnStartedLeading", "is nil")
	case c.Callbacks.OnStoppedLeading == nil:
		return bad("Callbacks.OnStoppedLeading", "is nil")
	}
	if errs := metav1validation.ValidateLabels(c.Labels, field.NewPath("Labels")); len(errs) > 0 {
		// The API server would refuse the Lease (422) on every attempt:
		// a candidate that could never lead.
		return bad("Labels", "cannot be written on a Lease: %v", errs.ToAggregate())
	}
	return nil
}
