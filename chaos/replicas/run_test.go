package replicas

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// settings are one run's sizes and timings.
type settings struct {
	timing     timing
	objects    int           // parents at the start; each gets a child per ring
	updateRate float64       // parent updates per second
	churnEvery time.Duration // a parent created or deleted this often while the faults run
	duration   time.Duration // how long the schedule runs at least; 0: one fault of each kind
}

// run is one seed's run: a namespace, the replicas, the writers, the
// faults, and the admin's clients to inject them and to check.
type run struct {
	t       *testing.T
	seed    uint64
	ns      string
	timing  timing
	core    *rest.RESTClient // the admin's, core/v1
	leases  *rest.RESTClient // the admin's, coordination.k8s.io/v1
	rbac    *rest.RESTClient // the admin's, rbac.authorization.k8s.io/v1
	fleet   *fleet
	writers *writers
	began   time.Time // the schedule's start
	applied []applied
}

// clients returns core/v1 and coordination.k8s.io/v1 clients for cfg.
func clients(cfg *rest.Config) (core, leases *rest.RESTClient, err error) {
	if core, err = testenv.CoreV1Client(cfg); err != nil {
		return nil, nil, err
	}
	leases, err = leaderelection.NewClient(cfg)
	return core, leases, err
}

// since is t's offset from the schedule's start, for the log.
func (r *run) since(t time.Time) string {
	return fmt.Sprintf("+%05.1fs", t.Sub(r.began).Seconds())
}

// preceding names the last fault that began before t.
func (r *run) preceding(t time.Time) string {
	for i := len(r.applied) - 1; i >= 0; i-- {
		if a := r.applied[i]; a.from.Before(t) {
			return fmt.Sprintf("after fault %v, begun at %s, %v before", a, r.since(a.from), t.Sub(a.from).Round(time.Millisecond))
		}
	}
	return "before any fault"
}

// runSeed runs one seed's schedule against the shared control plane and
// returns what the checker found. Processes are killed at cleanup
// whatever happens.
func runSeed(t *testing.T, cp *testenv.ControlPlane, seed uint64, s settings) result {
	ctx := t.Context()
	// Goroutines running before the run (the test framework's, the
	// control plane's process waiters) are not the run's to check.
	leaks := []goleak.Option{goleak.IgnoreCurrent(),
		// Idle keep-alive connections of the admin's clients: client-go
		// caches one transport per configuration for the life of the
		// process.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	}
	schedule := newSchedule(seed, s.duration, s.timing)
	t.Logf("seed %d (replay: CHAOS_SEED=%d), %d faults:\n%s", seed, seed, len(schedule), describe(schedule))
	admin := cp.Config()
	admin.QPS, admin.Burst = 200, 400
	r := &run{t: t, seed: seed, ns: cp.Namespace(t), timing: s.timing}
	var err error
	r.core, r.leases, err = clients(admin)
	must(t, err)
	r.rbac, err = rbacClient(admin)
	must(t, err)
	must(t, grantAll(ctx, r.rbac, r.ns))
	userCfg, err := cp.ConfigAs(user)
	must(t, err)
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	must(t, awaitAllowed(waitCtx, userCfg, r.ns))
	cancel()

	r.writers = newWriters(r.core, r.ns)
	for range s.objects {
		must(t, r.writers.create(ctx))
	}
	labels, stopWatching := r.watchLabels(ctx)
	defer stopWatching()
	r.fleet = &fleet{api: cp.Addr(), base: replicaConfig{Namespace: r.ns, Token: userCfg.BearerToken, CA: userCfg.CAData, Timing: s.timing}}
	t.Cleanup(func() { r.fleet.stopAll(15 * time.Second) })
	started := time.Now()
	for range startReplicas {
		r.startOne()
	}
	if took, why := r.awaitConverged(ctx, started, 3*time.Minute); why != "" {
		r.fleet.stopAll(15 * time.Second)
		t.Fatalf("the first assignment did not converge within %v: %s\n%s", took.Round(time.Millisecond), why, r.fleet.tail())
	} else {
		t.Logf("%d parents assigned and reconciled by %d replicas in both rings within %v of their start", s.objects, startReplicas, took.Round(time.Millisecond))
	}

	// The writers run while the faults do; creates and deletes stop with
	// the last fault, updates once the run has converged.
	rng := rand.New(rand.NewPCG(seed, 0x3173))
	updating, stopUpdates := context.WithCancel(ctx)
	churning, stopChurn := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.writers.updates(updating, rand.New(rand.NewPCG(seed, 0x0bd8)), s.updateRate) })
	wg.Go(func() { r.writers.churn(churning, rng, s.churnEvery) })
	r.began = time.Now()
	var forbidHold time.Duration
	for i, f := range schedule {
		if !sleep(ctx, f.gap) {
			break
		}
		r.applied = append(r.applied, r.apply(ctx, i+1, f))
		if f.kind == forbid {
			forbidHold = max(forbidHold, f.hold)
		}
	}
	stopChurn()
	lastFault := time.Now()
	parents, _ := r.writers.expected()
	bound := convergenceBound(s.timing, forbidHold, 3*len(parents))
	took, why := r.awaitConverged(ctx, lastFault, bound+30*time.Second)
	t.Logf("%s the last fault ended; converged %v later (bound %v)", r.since(lastFault), took.Round(time.Millisecond), bound.Round(time.Millisecond))
	stopUpdates()
	wg.Wait()
	objects, err := r.countObjects(ctx, r.fleet.snapshot())
	if err != nil {
		t.Errorf("counting objects: %v", err)
	}
	r.fleet.stopAll(15 * time.Second)
	stopWatching()
	if err := goleak.Find(leaks...); err != nil {
		t.Errorf("goroutines outlived the run (every replica process has exited, every proxy is closed): %v", err)
	}
	if *eventsFlag != "" {
		must(t, writeEvents(filepath.Join(*eventsFlag, fmt.Sprintf("seed-%d.events", seed)), r.fleet.snapshot()))
	}
	res := r.analyse(s, took, why, bound, objects, labels)
	if len(res.failures) > 0 {
		t.Logf("the replicas' last stderr lines:\n%s", r.fleet.tail())
	}
	return res
}

// analyse reads everything the replicas printed, once they all stopped,
// and returns the run's result with a line for every failed check.
func (r *run) analyse(s settings, took time.Duration, why string, bound time.Duration, objects objectCount, labels *labelWatch) result {
	events := r.fleet.snapshot()
	res := result{seed: r.seed, faults: map[faultKind]int{}, converged: took, bound: bound, objects: objects}
	for _, a := range r.applied {
		res.faults[a.kind]++
	}
	ends, pauses, exits := r.fleet.history()
	all := intervals(events, ends)
	deadlines := map[string]time.Time{} // member → its term's end, from its stopped line
	for _, ev := range events {
		if ev.kind == "stopped" && len(ev.fields) == 3 {
			deadlines[ev.fields[1]] = nanos(ev.fields[2])
		}
	}
	paused := func(iv interval) bool { return excusedByPause(iv, pauses[iv.proc], deadlines[iv.member]) }
	for _, o := range overlaps(all, paused) {
		if o.paused {
			res.overlapsPaused++
			continue
		}
		res.overlapsOther++
		res.fail("(a) overlapping reconciles outside a pause: %v; %s; %s", o, termEnds(events, o.a.member, o.b.member), r.preceding(o.b.start))
	}
	labels.mu.Lock()
	res.moves = len(labels.moves)
	live, liveEnds := movesOffLiveMembers(labels.moves, events, ends)
	for _, gap := range labels.gaps {
		res.fail("the checker's label history has a gap (its watch could not resume): %s", gap)
	}
	labels.mu.Unlock()
	// One line per ring, kind of object, old and new member: a rebalance
	// moves dozens at once.
	type group struct{ what, ring, from, to string }
	var order []group
	byGroup := map[group][]int{}
	for i, m := range live {
		g := group{"parents", m.ring, m.from, m.to}
		if m.child {
			g.what, res.movesLiveChildren = "children", res.movesLiveChildren+1
		} else {
			res.movesLiveParents++
		}
		if byGroup[g] == nil {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], i)
	}
	for _, g := range order {
		first, last := live[byGroup[g][0]], live[byGroup[g][len(byGroup[g])-1]]
		res.fail("(a) %d %s moved in %s from %s straight to %s (no drain acknowledged), seen %v–%v, while %s's term lasted until %v; the first: %s; %s",
			len(byGroup[g]), g.what, g.ring, g.from, g.to, clock(first.seen), clock(last.seen), g.from, clock(liveEnds[byGroup[g][0]]), first.object, r.preceding(first.seen))
	}
	res.late = countLateWrites(events, all)
	for _, f := range res.late.failures {
		res.fail("(a) a late write was accepted: %s", f)
	}
	if why != "" || took > bound {
		res.notConverged = true
		last := "no fault ran"
		if len(r.applied) > 0 {
			last = "the last fault was " + r.applied[len(r.applied)-1].String()
		}
		res.fail("(b) not converged within %v of the last fault (took %v; still: %q); %s", bound.Round(time.Millisecond), took.Round(time.Millisecond), why, last)
	}
	if len(objects.lost) > 0 || len(objects.extra) > 0 || len(objects.twice) > 0 {
		res.fail("(c) objects: lost %v, present though deleted %v, children created twice %v", objects.lost, objects.extra, objects.twice)
	}
	for _, line := range exits {
		res.fail("a replica failed: %s", line)
	}
	r.fleet.mu.Lock()
	for _, line := range r.fleet.errs {
		res.fail("a replica said: %s", line)
	}
	r.fleet.mu.Unlock()
	return res
}

// history returns, per process, when it ended (killed, exited, or now if
// still running), its pauses, and a line for every process that exited
// with a failure on its own (not killed): a panic, a race report.
func (f *fleet) history() (ends map[string]time.Time, pauses map[string][]span, failed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ends, pauses = map[string]time.Time{}, map[string][]span{}
	for _, p := range f.procs {
		end := p.killedAt
		if end.IsZero() {
			end = p.exitedAt
		}
		if end.IsZero() {
			end = time.Now()
		}
		ends[p.name] = end
		pauses[p.name] = slices.Clone(p.pauses)
		if p.killedAt.IsZero() && p.cmd.ProcessState != nil && p.cmd.ProcessState.ExitCode() != 0 {
			failed = append(failed, fmt.Sprintf("%s exited with status %d", p.name, p.cmd.ProcessState.ExitCode()))
		}
	}
	for _, line := range f.alarms {
		failed = append(failed, line)
	}
	return ends, pauses, failed
}

// tail is the replicas' last stderr lines, for a failure's report.
func (f *fleet) tail() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	from := max(0, len(f.logs)-60)
	return strings.Join(f.logs[from:], "\n")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// termEnds says when the members' terms ended, from their stopped
// lines: whether the first was still in its term when the second began
// tells a move off a live member from a reconcile that ran past its
// deadline.
func termEnds(events []event, members ...string) string {
	var parts []string
	for _, m := range members {
		end := "its term had not ended by the end of the run"
		for _, ev := range events {
			if ev.kind == "stopped" && len(ev.fields) == 3 && ev.fields[1] == m {
				end = fmt.Sprintf("its term's deadline was %v (stopped printed at %v)", clock(nanos(ev.fields[2])), clock(ev.at))
			}
		}
		parts = append(parts, m+": "+end)
	}
	return strings.Join(parts, "; ")
}

// writeEvents writes every line the replicas printed, each prefixed with
// its process, sorted by time: the raw material of a failure's report.
func writeEvents(path string, events []event) error {
	slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "%s %s %s %s\n", clock(ev.at), ev.proc, ev.kind, strings.Join(ev.fields, " "))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
