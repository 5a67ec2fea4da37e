package simulation_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/simulation"
	"github.com/listwatch/informer/workqueue"
)

// A Controller of the user's is checked like the built-in one. This one
// forgets that it is sharded: every member's informer selects every
// object (Options.Label, not its shard's selector) and its reconcile is
// not wrapped in sharding.Reconciler, so all three members reconcile
// each parent, at once. The simulator sees each reconcile through
// Term.Trace and reports it, with no fault at all.
func TestAControllerThatIgnoresItsShardIsCaughtReconcilingAKeyInTwoMembersAtOnce(t *testing.T) {
	res := simulation.Check(t, simulation.Options{Seed: 1, Faults: 10 * time.Second, Controller: &simulation.Controller{
		Run: func(ctx context.Context, term simulation.Term) {
			runEveryKey(ctx, term, simulation.AppLabel, everyKey{}) // the bug: not term.Selector, no sharding.Reconciler
		},
	}}, simulation.Schedule{})
	if !brokeInvariant(res, "one reconcile per key") {
		t.Fatalf("the overlapping reconciles went unseen:\n%s", res.Report())
	}
}

// The same controller, told its shard (term.Selector) and reconciling
// only what sharding.Reconciler hands it, keeps every invariant: the
// test above fails for the bug, not for the harness.
func TestAControllerThatKeepsToItsShardKeepsEveryInvariant(t *testing.T) {
	res := simulation.Check(t, simulation.Options{Seed: 1, Faults: 10 * time.Second, Controller: &simulation.Controller{
		Run: func(ctx context.Context, term simulation.Term) {
			runEveryKey(ctx, term, term.Selector, everyKey{observe: true})
		},
	}}, simulation.Schedule{})
	if res.Failed() {
		t.Fatal(res.Report())
	}
}

// An informer handed to Observe is judged as the built-in controller's
// is. This controller starts its informer with a context that ends once
// it has synced: its cache stops following the server while the writers
// go on, and once the faults stop it differs from the server, which the
// simulator reports. (The controller's reconciles would read that stale
// cache for the rest of its term.)
func TestAnObservedInformerStoppedAfterItsSyncBreaksCacheEqualsServer(t *testing.T) {
	res := simulation.Check(t, simulation.Options{Seed: 1, Faults: 10 * time.Second, Controller: &simulation.Controller{
		Run: func(ctx context.Context, term simulation.Term) {
			runEveryKey(ctx, term, term.Selector, everyKey{observe: true, stopAfterSync: true})
		},
	}}, simulation.Schedule{})
	if !brokeInvariant(res, "cache equals server") {
		t.Fatalf("the stale cache went unseen:\n%s", res.Report())
	}
}

// Observe refuses a Term the simulator did not give: there is no term
// to judge the informer in.
func TestObserveRefusesATermTheSimulatorDidNotGive(t *testing.T) {
	err := simulation.Observe(simulation.Term{Ring: simulation.LeaderRing}, nil)
	if err == nil || !strings.Contains(err.Error(), "the Term was not given by the simulator") {
		t.Fatalf("Observe(a Term of one's own) = %v, want an error naming the Term", err)
	}
}

// A Controller whose Run returns while its term goes on is called again,
// as a process whose main returned would be started again, and the
// history says so. Here the first Run of each term returns at once: the
// run still converges, and a retry is recorded. (Before, the term looked
// open with nothing in it, and the run failed with "0 leaders", naming
// the wrong culprit.)
func TestAControllerWhoseRunReturnsEarlyIsRunAgainAndTheHistorySaysSo(t *testing.T) {
	var calls atomic.Int32
	res := simulation.Check(t, simulation.Options{Seed: 1, Scenario: simulation.LeaderElected, Faults: 10 * time.Second,
		Controller: &simulation.Controller{Run: func(ctx context.Context, term simulation.Term) {
			if calls.Add(1) == 1 {
				return // its setup failed, say
			}
			runEveryKey(ctx, term, term.Selector, everyKey{observe: true})
		}}}, simulation.Schedule{})
	if res.Failed() {
		t.Fatal(res.Report())
	}
	retried := false
	for _, e := range res.History.Events() {
		retried = retried || (e.What == simulation.Retry && strings.Contains(e.Detail, "Controller.Run returned"))
	}
	if !retried {
		t.Fatalf("no retry in the history:\n%s", res.Report())
	}
}

// everyKey is how runEveryKey's controller differs from the plain one.
type everyKey struct {
	observe bool // hand its informer to simulation.Observe
	// stopAfterSync is a bug: the informers are started with a context
	// that ends once they have synced (a setup's, say), so the cache the
	// reconciles read stops following the server.
	stopAfterSync bool
}

// runEveryKey is a controller that reconciles every ConfigMap selector
// selects, each for 200 ms, until ctx ends; with a shard, through
// sharding.Reconciler, as a sharded controller must.
func runEveryKey(ctx context.Context, term simulation.Term, selector string, how everyKey) {
	scheme := k8sruntime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	factory, err := si.NewFactory(term.Config, si.FactoryOptions{Scheme: scheme, Logger: term.Logger})
	if err != nil {
		return
	}
	cms, err := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(term.Namespace), si.WithLabels(selector))
	if err != nil {
		return
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{Trace: term.Trace}) // how the simulator sees each reconcile
	defer queue.ShutDown()
	if _, err := cms.AddEventHandler(si.EnqueueKey[*corev1.ConfigMap](queue)); err != nil {
		return
	}
	if how.observe {
		if err := simulation.Observe(term, cms); err != nil {
			return
		}
	}
	started, stop := context.WithCancel(ctx)
	defer stop()
	factory.Start(started)
	defer factory.Wait()
	if factory.WaitForCacheSync(ctx) != nil {
		return
	}
	if how.stopAfterSync {
		stop()
	}
	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		informer.Sleep(ctx, term.Clock, 200*time.Millisecond)
		return workqueue.Result{}, nil
	}
	if term.Shard != nil && selector == term.Selector {
		client, err := factory.RESTClient(corev1.SchemeGroupVersion)
		if err != nil {
			return
		}
		reconcile = sharding.Reconciler(*term.Shard, cms.Lister(), client, "configmaps", reconcile)
	}
	workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{Workers: 2})
}

func brokeInvariant(res simulation.Result, invariant string) bool {
	for _, v := range res.Violations {
		if v.Invariant == invariant {
			return true
		}
	}
	return false
}

// Options that cannot run are an error that names the option, before
// anything starts.
func TestOptionsThatCannotRunAreAnErrorNamingTheOption(t *testing.T) {
	for _, tc := range []struct {
		opts simulation.Options
		want string
	}{
		{simulation.Options{Label: "app"}, `Options.Label "app"`},
		{simulation.Options{Label: "a=b,c=d"}, `Options.Label "a=b,c=d"`},
		{simulation.Options{Controller: &simulation.Controller{}}, "Options.Controller has no Run"},
		{simulation.Options{Replicas: 2}, "Options.Replicas 2"},
		{simulation.Options{Replicas: 6}, "Options.Replicas 6"},
		// A negative Settle ran no convergence check and no cache
		// comparison, and the run passed.
		{simulation.Options{Scenario: simulation.LeaderElected, Settle: -time.Second}, "Options.Settle -1s"},
		// A Timing no elector accepts was a run whose replicas never
		// stood, reported as "converged: 0 leaders".
		{simulation.Options{Scenario: simulation.LeaderElected, Timing: simulation.Timing{Lease: 4 * time.Second}}, "Options.Timing"},
		{simulation.Options{Scenario: simulation.LeaderElected, Timing: simulation.Timing{Lease: 3 * time.Second, Renew: 3 * time.Second, Retry: time.Second}}, "Options.Timing"},
	} {
		synctest.Test(t, func(t *testing.T) {
			_, err := simulation.Run(tc.opts, simulation.Schedule{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run(%+v) = %v, want an error containing %q", tc.opts, err, tc.want)
			}
		})
	}
}
