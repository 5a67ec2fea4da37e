package simulation

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
)

// Scenario is what the replicas run: Sharded, LeaderElected or
// CustomResources.
type Scenario interface {
	String() string
	rings() []string
	run(ctx context.Context, w *world, r *replica)
	// schedule draws the scenario's faults: NewSchedule or NewCRDSchedule.
	schedule(seed int64, replicas int, length time.Duration) Schedule
}

// The scenarios.
var (
	// Sharded: every replica a member and a sharder candidate of the two
	// Rings, over the same ConfigMaps (package sharding).
	Sharded Scenario = sharded{}
	// LeaderElected: every replica a candidate for LeaderLease; the
	// leader reconciles every ConfigMap (package leaderelection).
	LeaderElected Scenario = leaderElected{}
	// CustomResources: every replica holds, releases and asks again for
	// informers of a custom resource whose CRD is removed, installed
	// again and moved between versions (package sharedinformer).
	CustomResources Scenario = customResources{}
)

// Options describe one run. Zero values take the defaults.
type Options struct {
	Seed     int64
	Scenario Scenario // default Sharded
	Replicas int      // slots, 3 to 5; default 3
	// Faults is how long faults may be drawn for (NewSchedule's length).
	// Default: 60 s; a negative one is an error.
	Faults time.Duration
	Timing Timing // default DefaultTiming; a Timing no elector accepts is an error
	// Settle bounds convergence once every fault has ended. Default:
	// 10 LeaseDurations (see ConvergenceBound); a negative one is an
	// error.
	Settle time.Duration
	// Logger receives the library's logs. Default: discarded.
	Logger *slog.Logger
	// Trace, if set, receives the replicas' informers' trace events; each
	// Detail begins with the replica's name and ring.
	Trace informer.TraceHook
	// Controller, if set, is run in every term in place of the built-in
	// controller (see Controller).
	Controller *Controller
	// Label is the one label, "key=value", that the writers put on every
	// parent they create. Default AppLabel.
	Label string
	// GarbageCollector runs kube-controller-manager's garbage collector:
	// each second, an object whose owners are all gone is deleted. Off by
	// default, as on the local control plane (testenv), which runs no
	// kube-controller-manager: a controller that relies on it says so.
	GarbageCollector bool
}

func (o Options) withDefaults() Options {
	if o.Scenario == nil {
		o.Scenario = Sharded
	}
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.Faults == 0 {
		o.Faults = 60 * time.Second
	}
	if o.Timing == (Timing{}) {
		o.Timing = DefaultTiming
	}
	if o.Settle == 0 {
		o.Settle = ConvergenceBound(o.Timing)
	}
	if o.Label == "" {
		o.Label = AppLabel
	}
	return o
}

// validate reports the first option that cannot be run.
func (o Options) validate() error {
	if _, _, err := splitLabel(o.Label); err != nil {
		return err
	}
	if o.Controller != nil && o.Controller.Run == nil {
		return errNoRun
	}
	if o.Replicas < 3 || o.Replicas > 5 {
		return fmt.Errorf("simulation: Options.Replicas %d: the simulator runs 3 to 5 replica slots", o.Replicas)
	}
	if err := o.Timing.validate(); err != nil {
		return err
	}
	if o.Faults < 0 {
		return fmt.Errorf("simulation: Options.Faults %v: how long faults are drawn for must not be negative", o.Faults)
	}
	if o.Settle < 0 {
		// The convergence loop would never run, nor the quiescent
		// checks after it: a run that checked nothing would pass.
		return fmt.Errorf("simulation: Options.Settle %v: the bound on convergence must not be negative", o.Settle)
	}
	return nil
}

// validate reports a Timing no replica could run with: a Lease, Renew
// or Retry not set (a Timing is given whole, or left zero for
// DefaultTiming), a negative Work, or one leaderelection refuses (its
// Config's rules: a LeaseDuration of whole seconds, greater than
// RenewDeadline, itself greater than JitterFactor×RetryPeriod). Each
// replica's elector and members would refuse it, and the run would
// report "converged" broken by a controller that never stood.
func (t Timing) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("simulation: Options.Timing %+v: %s", t, fmt.Sprintf(format, args...))
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"Lease", t.Lease}, {"Renew", t.Renew}, {"Retry", t.Retry}} {
		if d.value <= 0 {
			return bad("%s must be positive (give Lease, Renew and Retry, or none for DefaultTiming)", d.name)
		}
	}
	if t.Work < 0 {
		return bad("Work must not be negative")
	}
	leases, err := leaderelection.NewClient(&rest.Config{Host: "http://timing.invalid"})
	if err != nil {
		return err
	}
	_, err = leaderelection.New(leaderelection.Config{Client: leases, Namespace: Namespace, Name: LeaderLease,
		LeaseDuration: t.Lease, RenewDeadline: t.Renew, RetryPeriod: t.Retry,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}}})
	if err != nil {
		return bad("%v", err)
	}
	return nil
}

// splitLabel splits a "key=value" label.
func splitLabel(label string) (key, value string, err error) {
	key, value, ok := strings.Cut(label, "=")
	if !ok || key == "" || strings.ContainsAny(label, ", !") {
		return "", "", fmt.Errorf("simulation: Options.Label %q is not one label of the form key=value", label)
	}
	return key, value, nil
}

// ConvergenceBound is how long after the last fault ends the replicas
// have to converge: a sharder elected afresh waits a LeaseDuration to
// take the Lease and another to judge the members; a dead member's Lease
// is judged in a third; an informer refused during the faults retries
// within two more (RetryTuning); drains, acknowledgements and
// assignments take a few RetryPeriods. Ten LeaseDurations covers it
// with room to spare.
func ConvergenceBound(t Timing) time.Duration { return 10 * t.Lease }

// Result is what a run found.
type Result struct {
	Options    Options
	Schedule   Schedule
	Violations []Violation
	History    *History
	// Simulated is the simulated time the run covered; Converged how
	// long after the last fault the state converged (-1: never).
	Simulated, Converged time.Duration
	// Coverage counts, by case, how often the run reached each order of
	// events its scenario counts (the custom resources scenario's; in the
	// others, the reads and stale runs "read your writes" judged, and a
	// grouped seed's drains and adoptions: groups.go): an
	// invariant judges such a case only in the runs that reach it.
	// CoverageGaps lists the custom resources cases a sum of them missed.
	Coverage map[string]int
}

// Violation is one broken invariant, with the moment it broke.
type Violation struct {
	Invariant string
	At        time.Time
	Text      string
}

// String names the invariant broken, when, and how.
func (v Violation) String() string {
	return fmt.Sprintf("%s at %s: %s", v.Invariant, v.At.Format("15:04:05.000"), v.Text)
}

// Failed reports whether any invariant broke.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

// Report is a failure's whole story: the violations, the schedule and,
// around each violation, the history.
func (r Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s, seed %d, %d replicas: %d violations\n", r.Options.Scenario, r.Options.Seed, r.Options.Replicas, len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	fmt.Fprintf(&b, "schedule:\n%s", indent(r.Schedule.String()))
	for i, v := range r.Violations {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "history around %s:\n%s", v.At.Format("15:04:05.000"), r.History.Around(v.At, 6*time.Second, func(e Event) bool {
			return e.What != Begin && e.What != End || strings.Contains(v.Text, e.Key)
		}))
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// Run runs the replicas under sched and checks the invariants. It must
// be called inside a testing/synctest bubble (synctest.Test), which
// gives it simulated time; Check does that for a test.
func Run(opts Options, sched Schedule) (Result, error) {
	opts = opts.withDefaults()
	start := time.Now()
	res := Result{Options: opts, Schedule: sched, Converged: -1}
	if err := opts.validate(); err != nil {
		return res, err
	}
	w, err := newWorld(opts)
	if err != nil {
		return res, err
	}
	defer w.admin.Close()
	res.History = w.hist
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if w.crd != nil {
		w.installCRD(CRDVersions[0])
	}
	if w.grouped {
		if err := w.makeGroups(ctx); err != nil {
			return res, err
		}
	}
	for i := range Parents {
		if err := w.createParent(ctx, parentName(i), 0); w.crd == nil && err != nil {
			return res, err
		}
	}
	moves := w.watchLabels(ctx)
	for slot := range opts.Replicas {
		w.start(ctx, slot)
	}
	var timers sync.WaitGroup
	after := func(d time.Duration, f func()) {
		timers.Go(func() {
			select {
			case <-time.After(d):
				f()
			case <-ctx.Done():
			}
		})
	}
	writers, stopWriters := context.WithCancel(ctx)
	if w.crd != nil {
		go w.writeWidgets(writers)
	} else {
		go w.write(writers)
	}
	if opts.GarbageCollector {
		timers.Go(func() { w.collectGarbage(ctx) }) // ends with ctx, before timers.Wait returns
	}
	for _, f := range sched {
		time.Sleep(time.Until(start.Add(f.At)))
		w.apply(ctx, f, after)
	}
	time.Sleep(time.Until(start.Add(max(opts.Faults, sched.End()))))
	stopWriters()
	dbg("healing at %v", time.Since(start))
	w.healAll(ctx)
	healed := time.Now()
	if w.crd != nil {
		close(w.crd.settled)
	}

	// Convergence: checked every second up to the bound.
	var last []Violation
	for time.Since(healed) <= opts.Settle {
		time.Sleep(time.Second)
		if last = w.converged(); w.crd != nil {
			last = w.crdConverged()
		}
		if len(last) == 0 {
			res.Converged = time.Since(healed)
			break
		}
	}
	res.Violations = append(res.Violations, last...)
	if len(last) > 0 && w.log.Enabled(ctx, slog.LevelDebug) {
		buf := make([]byte, 1<<22)
		w.log.Debug("simulation: not converged; every goroutine", "stacks", string(buf[:runtime.Stack(buf, true)]))
		for _, u := range w.srv.Objects(configMaps) {
			if u.GetNamespace() == Namespace {
				w.log.Debug("simulation: not converged; an object", "name", u.GetName(), "rv", u.GetResourceVersion(),
					"labels", u.GetLabels(), "owners", len(u.GetOwnerReferences()))
			}
		}
	}
	if res.Converged >= 0 {
		// Quiescence: writers stopped, every reconcile done, every event
		// delivered. A reflector may still be in its backoff after a
		// fault (synctest.Wait counts a timer as blocked), so the caches
		// are compared each second until they equal the server, for the
		// rest of the bound but at least two LeaseDurations (RetryTuning
		// caps the backoff at one, jitter doubles it). The custom
		// resources scenario's holders keep the reflector's default
		// backoff (BackoffMax 30 s, doubled by jitter), so their informers
		// are given restoreBackoff past the bound: one whose last 404 met
		// a served check that saw the CRD half moved retries that late,
		// and only then says "not served".
		deadline := healed.Add(opts.Settle)
		if w.crd != nil {
			deadline = deadline.Add(restoreBackoff)
		}
		if soonest := time.Now().Add(2 * opts.Timing.Lease); deadline.Before(soonest) {
			deadline = soonest
		}
		for {
			synctest.Wait()
			stale := w.cachesEqualServer()
			if w.crd != nil {
				stale = w.crdQuiescent()
			}
			if len(stale) == 0 || !time.Now().Before(deadline) {
				res.Violations = append(res.Violations, stale...)
				if w.crd != nil {
					w.reachAtQuiescence()
				}
				break
			}
			time.Sleep(time.Second)
		}
		if w.crd != nil && !res.Failed() {
			res.Violations = append(res.Violations, w.restoreCRD(ctx)...)
		}
	}
	res.Simulated = time.Since(start)
	dbg("converged=%v at %v: %v", res.Converged, time.Since(start), last)

	for _, r := range w.running() {
		w.kill(r.slot)
	}
	dbg("killed all at %v", time.Since(start))
	cancel()
	timers.Wait()
	// A restart timer that fired between those kills and cancel started a
	// replica: stop it too, or its in-memory server outlives the bubble.
	for _, r := range w.running() {
		w.kill(r.slot)
	}
	res.Violations = append(res.Violations, w.checkHistory(moves())...)
	w.mu.Lock()
	res.Violations = append(res.Violations, w.streamBroken...)
	res.Violations = append(res.Violations, w.ringBroken...)
	w.mu.Unlock()
	if w.crd != nil {
		close(w.crd.ended)
		w.crdWatchers.Wait()
		w.crd.mu.Lock()
		res.Violations = append(res.Violations, w.crd.violations...)
		w.crd.mu.Unlock()
		res.Coverage = w.crd.coverage()
	} else {
		events := w.hist.Events()
		res.Coverage = w.readYourWrites(events).coverage()
		maps.Copy(res.Coverage, w.groupedCoverage(events))
	}
	return res, nil
}

func dbg(format string, args ...any) {
	if os.Getenv("SIMDEBUG") != "" {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}
