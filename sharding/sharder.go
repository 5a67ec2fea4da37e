package sharding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/random"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
)

// SharderConfig describes one sharder candidate. Run one in every
// replica (or in a deployment of its own): one is elected, the others
// stand by, polling the shard Leases so that, once elected, they know
// at once which members are alive. What they saw of members gone (a
// Lease deleted) they do not keep: an object still labelled for such a
// member waits at least a LeaseDuration from the election (from when the
// elected sharder's synced caches first show it), as under a sharder
// started then.
type SharderConfig struct {
	// Config reaches the API server for the sharder's informers and
	// label PATCHes. Its QPS and Burst bound how fast objects are
	// assigned and moved: left at zero, they are the factory's 50 and
	// 100 (sharedinformer's client limits). Assigning 30,000 objects (a
	// PATCH each) then takes about 10 minutes, moving them off a live
	// member (a drain, then the move) about 20; client-go's 5 and 10
	// would take ten times as long. Required.
	Config *rest.Config
	// LeaseClient talks to coordination.k8s.io/v1 (leaderelection.NewClient):
	// the sharder's election and the polls of the shard Leases. Required.
	LeaseClient *rest.RESTClient
	// LeaseNamespace holds the shard Leases and the sharder's. Required.
	LeaseNamespace string
	// Ring names the ring, as the members' MemberConfig.Ring. Required.
	Ring string
	// Resources are the sharded resources, each once, in one version: every object of
	// them (in Namespace) is labelled with its owner. Objects with a controller
	// owner reference follow their owner's key (RingKey). At least one.
	// Not objects in a cycle of controller owners (one that controls
	// itself, two that control each other): each waits for the other,
	// and none is labelled (docs/16-sharding.md, "Children follow their
	// parent"). Every member needs a Reconciler for each: an object of
	// any of them, a child too, leaves a live member by a drain that
	// member's Reconciler of its resource acknowledges.
	Resources []schema.GroupVersionResource
	// Namespace limits the sharded objects to one namespace; "" is all.
	Namespace string

	// LeaseDuration, RenewDeadline and RetryPeriod time the sharder's
	// election as a leader's (see leaderelection.Config; defaults 15 s,
	// 10 s, 2 s). The shard Leases are polled every RetryPeriod plus
	// jitter; a Lease that names no duration is judged by LeaseDuration.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// VirtualNodes per member on the ring. Default: DefaultVirtualNodes.
	// Every sharder candidate of a ring must use the same value.
	VirtualNodes int
	// Workers is how many label PATCHes run at once, per resource.
	// Default: 4.
	Workers int
	// Identity is this candidate's identity in the sharder election.
	// Default: leaderelection's (hostname and random digits).
	Identity string
	// OnLabel, if set, is told of every label PATCH answered success, on
	// the worker's goroutine: what ("assign", "move", "drain",
	// "undrain"), the object and its new owner ("" for undrain). One
	// that landed but was answered an error (its answer lost, say) is
	// not told: the key's retry finds nothing left to write
	// (TestALabelPatchWhoseAnswerWasLostIsNotToldToOnLabel). For
	// measurements; it must be quick.
	OnLabel func(action string, key informer.Key, member string)
	// OnLeading, if set, is called when this candidate starts (true) and
	// stops (false) being the sharder. It must be quick.
	OnLeading func(leading bool)
	// SyncTimeout bounds the elected sharder's wait for its informers'
	// first lists (a 403, a resource not yet served). A sync that fails
	// is logged, counted (listwatch_sharder_sync_failures_total) and
	// tried again with a fresh factory after a backoff that doubles from
	// RetryPeriod up to MaxSyncBackoff, within the same term. Default:
	// 2 minutes.
	SyncTimeout time.Duration
	// MaxSyncBackoff caps the wait between two sync attempts. Default:
	// 30 seconds.
	MaxSyncBackoff time.Duration
	// Metrics, if set, receives the sharder's metrics and its informers'
	// (named after the ring and the resource, the same every term).
	// The sharders of several rings may share one Registry; two
	// Sharders of one ring may not (the second NewSharder fails with a
	// *metrics.DuplicateError): one Sharder runs for a process's life,
	// standing again after each lost term. Optional.
	Metrics *metrics.Registry
	// Clock times the polls, the waits and the election. Default:
	// informer.RealClock.
	Clock informer.Clock
	// Logger receives elections, membership changes and failures.
	// Default: slog.Default().
	Logger *slog.Logger
}

// Sharder labels every object of the sharded resources with its owner,
// a member of the ring, and moves objects when members join or leave
// (see docs/16-sharding.md for the table of what it does). It keeps no
// state of its own: the labels and the Leases are the state, so a newly
// elected sharder carries on where the last one stopped.
type Sharder struct {
	cfg     SharderConfig
	members *members
	elector *leaderelection.Elector
	metrics *sharderMetrics
	// strays holds the shard label values reported as naming no possible
	// member, so each is logged once, not at every object or retry. It
	// only quiets the log: decide judges every value afresh.
	strays sync.Map
	// running is set while Run runs: its Elector runs once at a time.
	running atomic.Bool
}

// NewSharder validates cfg and returns a Sharder. A *ConfigError or a
// *leaderelection.ConfigError names what is wrong.
func NewSharder(cfg SharderConfig) (*Sharder, error) {
	if err := validateRing(cfg.Ring); err != nil {
		return nil, err
	}
	switch {
	case cfg.Config == nil:
		return nil, &ConfigError{Field: "Config", Reason: "is nil"}
	case len(cfg.Resources) == 0:
		return nil, &ConfigError{Field: "Resources", Reason: "is empty: name the sharded resources"}
	case cfg.VirtualNodes < 0:
		return nil, &ConfigError{Field: "VirtualNodes", Reason: fmt.Sprintf("(%d) must not be negative", cfg.VirtualNodes)}
	case cfg.Workers < 0:
		return nil, &ConfigError{Field: "Workers", Reason: fmt.Sprintf("(%d) must not be negative", cfg.Workers)}
	case cfg.SyncTimeout < 0:
		return nil, &ConfigError{Field: "SyncTimeout", Reason: fmt.Sprintf("(%v) must not be negative", cfg.SyncTimeout)}
	case cfg.MaxSyncBackoff < 0:
		return nil, &ConfigError{Field: "MaxSyncBackoff", Reason: fmt.Sprintf("(%v) must not be negative", cfg.MaxSyncBackoff)}
	}
	for i, gvr := range cfg.Resources {
		if slices.ContainsFunc(cfg.Resources[:i], func(seen schema.GroupVersionResource) bool { return seen.GroupResource() == gvr.GroupResource() }) {
			// Its informer would be asked for twice, which the factory
			// refuses, so no sync could ever succeed; in another version,
			// two workers would decide the same objects
			// (TestNewSharderRefusesAResourceListedTwiceInAnyVersion).
			return nil, &ConfigError{Field: "Resources", Reason: fmt.Sprintf("lists %v twice (each resource once, in one version)", gvr.GroupResource())}
		}
	}
	if cfg.Workers == 0 {
		cfg.Workers = 4
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OnLeading == nil {
		cfg.OnLeading = func(bool) {}
	}
	cfg.Clock = informer.ClockOrReal(cfg.Clock)
	cfg.SyncTimeout = durationOr(cfg.SyncTimeout, 2*time.Minute)
	cfg.MaxSyncBackoff = durationOr(cfg.MaxSyncBackoff, 30*time.Second)
	s := &Sharder{cfg: cfg}
	el, err := leaderelection.New(leaderelection.Config{
		Client: cfg.LeaseClient, Namespace: cfg.LeaseNamespace, Name: sharderLeaseName(cfg.Ring), Identity: cfg.Identity,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Logger:          cfg.Logger,
		Clock:           cfg.Clock,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: s.lead,
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return nil, err
	}
	s.elector = el
	s.cfg.Identity = el.Identity()
	s.cfg.LeaseDuration, s.cfg.RetryPeriod = durationOr(cfg.LeaseDuration, 15*time.Second), durationOr(cfg.RetryPeriod, 2*time.Second)
	s.members = newMembers(cfg.LeaseClient, cfg.LeaseNamespace, cfg.Ring, cfg.Clock, s.cfg.LeaseDuration, requestTimeout(cfg.RenewDeadline))
	if s.metrics, err = newSharderMetrics(cfg.Metrics, cfg.Ring); err != nil {
		return nil, err
	}
	return s, nil
}

// requestTimeout bounds each request a sharder or a member sends (a poll,
// a takeover, a label PATCH, a drain's acknowledgement): one that hangs
// must not hold up the next, nor a worker and the objects behind it. Each
// gets what an election attempt gets, half the renew deadline
// (DefaultRequestTimeout for the default 10 s).
func requestTimeout(renewDeadline time.Duration) time.Duration {
	if renewDeadline <= 0 {
		return DefaultRequestTimeout
	}
	return renewDeadline / 2
}

// Run stands for sharder until ctx ends, and shards while elected: a
// lost term is followed by standing again. Meanwhile it polls the shard
// Leases every RetryPeriod (plus jitter), elected or not. It returns nil
// when ctx ends, and once everything it started has stopped; an error at
// once if another Run of this Sharder is running
// (TestASecondRunOfOneSharderDoesNotSpin).
func (s *Sharder) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("sharding: Run is already running on this Sharder")
	}
	defer s.running.Store(false)
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { s.pollMembers(ctx) })
	for ctx.Err() == nil {
		if err := s.elector.Run(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("sharding: sharder term ended", "err", err)
		}
	}
	return nil
}

// pollMembers polls the shard Leases until ctx ends.
func (s *Sharder) pollMembers(ctx context.Context) {
	var last string
	for {
		if err := s.members.poll(ctx); err != nil && ctx.Err() == nil && err.Error() != last {
			last = err.Error()
			s.cfg.Logger.Warn("sharding: polling shard Leases failed", "err", err)
		}
		wait := s.cfg.RetryPeriod + time.Duration(random.Fraction()*leaderelection.JitterFactor*float64(s.cfg.RetryPeriod))
		if !informer.Sleep(ctx, s.cfg.Clock, wait) {
			return
		}
	}
}

// lead shards until ctx (the sharder's term) ends.
func (s *Sharder) lead(ctx context.Context) {
	s.members.leads(true)
	defer s.members.leads(false)
	s.cfg.OnLeading(true)
	defer s.cfg.OnLeading(false)
	s.cfg.Logger.Info("sharding: sharder elected", "ring", s.cfg.Ring)
	// Wait until the Leases can be judged: act on no guess.
	for {
		if _, judged := s.members.alive(); judged {
			break
		}
		if !informer.Sleep(ctx, s.cfg.Clock, s.cfg.RetryPeriod/4) {
			return
		}
	}
	// A failure (an informer that cannot be made or cannot sync: a 403,
	// a resource the server does not serve yet) is retried with a fresh
	// factory after a growing backoff: the Lease is held either way, and
	// a sharder that holds it must shard.
	backoff := min(s.cfg.RetryPeriod, s.cfg.MaxSyncBackoff) // the cap holds from the first wait
	for {
		err := s.shard(ctx)
		if ctx.Err() != nil {
			return
		}
		s.metrics.syncFailed()
		s.cfg.Logger.Error("sharding: sharding failed; retrying", "ring", s.cfg.Ring, "in", backoff, "err", err)
		if !informer.Sleep(ctx, s.cfg.Clock, backoff) {
			return
		}
		backoff = min(2*backoff, s.cfg.MaxSyncBackoff)
	}
}

// liveRing is the alive members' ring, rebuilt when they change.
type liveRing struct {
	mu      sync.RWMutex
	members []string
	ring    *Ring
	alive   map[string]bool
}

// update installs members if they differ from the current ones, and
// reports whether they did.
func (r *liveRing) update(members []string, virtualNodes int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ring != nil && slices.Equal(r.members, members) {
		return false, nil
	}
	built, err := rebuild(r.ring, members, virtualNodes)
	if err != nil {
		return false, err
	}
	r.members, r.ring, r.alive = members, built, map[string]bool{}
	for _, m := range members {
		r.alive[m] = true
	}
	return true, nil
}

// isAlive reports whether member is on the ring.
func (r *liveRing) isAlive(member string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.alive[member]
}

// owner returns the ring's owner of key and whether member is alive.
func (r *liveRing) owner(key string, member string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.ring == nil {
		return "", false // not built yet: nobody to give it to
	}
	return r.ring.Owner(key), r.alive[member]
}

func durationOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
