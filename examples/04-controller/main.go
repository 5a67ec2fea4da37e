// Command 04-controller is a small controller done right. A parent
// ConfigMap (label role=parent) says data.replicas=N and data.value=V; the
// controller keeps N child ConfigMaps, each with data.value=V, and writes
// the count it sees into the parent's annotation.
//
// What makes it "right", each step explained where it happens:
//
//   - handlers only enqueue keys; a child's event enqueues its owner's key;
//
//   - N workers reconcile keys, reading through the lister, never the API;
//
//   - reconcile is level-triggered: it compares what is with what should be;
//
//   - it writes only on drift, and a 409 Conflict just requeues the key;
//
//   - a readyourwrites.Guard holds a parent's key until the cache shows
//     what its last reconcile wrote, so it never creates duplicates or
//     writes on a cache from before its own writes;
//
//   - workers start only after WaitForCacheSync;
//
//   - Ctrl-C drains the queue and stops everything cleanly.
//
//     go run ./04-controller --namespace tour            # scripted demo, then exits
//     go run ./04-controller --namespace tour --demo=false # runs until Ctrl-C; use kubectl
package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("04-controller", "a small controller done right: keys, workers, reconcile from the cache, reading its own writes", out)
	conn := cli.Register(fs, "listwatch-tour")
	workers := fs.Int("workers", 2, "reconciles running at once (controller-runtime's MaxConcurrentReconciles)")
	demo := fs.Bool("demo", true, "create parents and change them step by step, then exit; false: run until Ctrl-C or --duration")
	parents := fs.Int("parents", 2, "parents the demo creates")
	replicas := fs.Int("replicas", 3, "children each demo parent asks for")
	duration := fs.Duration("duration", 0, "with --demo=false, stop after this long (0: until Ctrl-C)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	client, err := cli.CoreV1(cfg)
	if err != nil {
		return err
	}
	ns := conn.Namespace
	if err := cli.EnsureNamespace(ctx, client, ns); err != nil {
		return err
	}
	log := &logger{out: out}

	// One informer holds parents and children alike: both are ConfigMaps
	// in this namespace, and one cache (one LIST, one WATCH) serves both.
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
	})
	if err != nil {
		return err
	}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw, Resource: corev1.Resource("configmaps"),
	})
	if err != nil {
		return err
	}
	c, err := newController(client, ns, inf, log, 0)
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(c.handler(), sharedinformer.HandlerOptions{Name: "controller"})
	if err != nil {
		return err
	}

	// The informer and the workers get their own context: on Ctrl-C we first
	// drain the queue, then stop them, in that order.
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(runCtx) })

	// Pitfall 4: a worker that starts before the cache is full sees "no
	// children" and creates them all again.
	log.say("Waiting for the cache to sync before starting %d workers.", *workers)
	if err := sharedinformer.WaitForCacheSync(ctx, reg); err != nil {
		stopRun()
		wg.Wait()
		return err
	}
	wg.Go(func() {
		workqueue.Run(runCtx, c.queue, c.reconcile, workqueue.RunOptions[informer.Key]{
			Workers: *workers,
			Gate:    c.guard, // a parent waits for its own writes, the others go on
			OnError: func(key informer.Key, err error) {
				if workqueue.GivenUp(err) { // Run's rule, which is not errors.As
					log.say("  %-12s %v; not retried until the parent changes", key.Name, err)
					return
				}
				log.say("  %-12s error, requeued with backoff: %v", key.Name, err)
			},
		})
	})

	var runErr error
	if *demo {
		runErr = c.demo(ctx, *parents, *replicas)
	} else {
		log.say("Controller running. Try: kubectl -n %s create configmap web --from-literal=replicas=3 && kubectl -n %s label configmap web role=parent", ns, ns)
		wait := ctx.Done()
		if *duration > 0 {
			timer := time.NewTimer(*duration)
			defer timer.Stop()
			select {
			case <-wait:
			case <-timer.C:
			}
		} else {
			<-wait
		}
	}

	// Graceful shutdown: finish the reconciles in flight and what is queued
	// (for at most 10s), then stop the workers and the informer.
	drainCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.queue.ShutDownWithDrain(drainCtx); err != nil {
		log.say("Shutdown: the queue did not drain in time (%v); stopping anyway.", err)
	}
	stopRun()
	wg.Wait()
	log.say("Stopped: queue drained, workers and informer returned. %s", c.stats.String())
	return runErr
}

// logger serialises lines from concurrent workers.
type logger struct {
	mu  sync.Mutex
	out io.Writer
}

func (l *logger) say(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, format+"\n", args...)
}
