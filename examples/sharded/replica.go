package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/kubeconfig"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// replicaEnv, when set, makes this program (or its test binary) a replica
// process instead of the demo; its value is the replicaConfig as JSON.
const replicaEnv = "SHARDED_REPLICA"

// ring is the ring's name: label keys shard.listwatch.dev/sharded and
// drain.shard.listwatch.dev/sharded.
const ring = "sharded"

// replicaConfig is what the demo tells each replica process.
type replicaConfig struct {
	Kubeconfig, Context, Namespace string
	Name                           string // the replica's name; each term's member id adds a suffix
	Via, ServerName                string // reach the API server through this proxy address, if set
	Member, Sharder                bool   // be a member of the ring; stand for sharder
	Reconcile                      time.Duration
	Workers                        int
	Lease, Renew, Retry            time.Duration
	QPS                            float64
}

// recorder prints one event a line, each ending in this host's wall
// clock in Unix nanoseconds: the demo reads every replica's lines on one
// clock.
type recorder struct {
	mu  sync.Mutex
	out io.Writer
}

func (r *recorder) say(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+" %d\n", append(args, time.Now().UnixNano())...)
}

// replicaMain runs one replica until its stdin closes (the demo ended or
// died) and returns its exit status.
func replicaMain(encoded string) int {
	rec := &recorder{out: os.Stdout}
	var c replicaConfig
	if err := json.Unmarshal([]byte(encoded), &c); err != nil {
		rec.say("error %q", err.Error())
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	if err := runReplica(ctx, c, rec); err != nil {
		rec.say("error %q", err.Error())
		return 1
	}
	return 0
}

func runReplica(ctx context.Context, c replicaConfig, rec *recorder) error {
	cfg, err := kubeconfig.Flags{Path: c.Kubeconfig, Context: c.Context}.Load()
	if err != nil {
		return err
	}
	if c.Via != "" {
		cfg.Host, cfg.TLSClientConfig.ServerName = "https://"+c.Via, c.ServerName
	}
	cfg.QPS, cfg.Burst = float32(c.QPS), int(2*c.QPS)
	leases, err := leaderelection.NewClient(cfg)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var wg sync.WaitGroup
	defer wg.Wait()
	if c.Sharder {
		sharder, err := sharding.NewSharder(sharding.SharderConfig{
			Config: cfg, LeaseClient: leases, LeaseNamespace: c.Namespace, Ring: ring, Identity: c.Name,
			Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: c.Namespace,
			LeaseDuration: c.Lease, RenewDeadline: c.Renew, RetryPeriod: c.Retry, Workers: 16, Logger: logger,
			OnLabel: func(action string, key informer.Key, member string) {
				rec.say("label %s %s %s", action, key, orNone(member))
			},
			OnLeading: func(leading bool) { rec.say("sharder %s %t", c.Name, leading) },
		})
		if err != nil {
			return err
		}
		wg.Go(func() { sharder.Run(ctx) })
		if !c.Member { // a sharder of its own: report its heap, the cost of watching every object
			wg.Go(func() { reportHeap(ctx, c.Name, rec) })
		}
	}
	if c.Member {
		member, err := sharding.NewMember(sharding.MemberConfig{
			Client: leases, Namespace: c.Namespace, Ring: ring, Name: c.Name,
			LeaseDuration: c.Lease, RenewDeadline: c.Renew, RetryPeriod: c.Retry, Logger: logger,
			Run: func(ctx context.Context, shard sharding.Shard) { runTerm(ctx, cfg, c, shard, rec, logger) },
		})
		if err != nil {
			return err
		}
		wg.Go(func() { member.Run(ctx) })
	}
	return nil
}

// runTerm is one member term: an informer over this member's ConfigMaps
// only, and workers whose reconcile works for c.Reconcile. It prints
// "member" at the start, "B"/"E" around every reconcile, "cache" every
// second, and "stopped" with the term's final deadline once every
// reconcile has returned.
func runTerm(ctx context.Context, cfg *rest.Config, c replicaConfig, shard sharding.Shard, rec *recorder, logger *slog.Logger) {
	rec.say("member %s %s", c.Name, shard.Member)
	defer func() {
		term, _ := leaderelection.TermOf(ctx)
		deadline := term.End()
		rec.say("stopped %s %d", shard.Member, deadline.UnixNano())
	}()
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return
	}
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme, Logger: logger})
	if err != nil {
		logger.Error("factory", "err", err)
		return
	}
	cms, err1 := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(c.Namespace), si.WithLabels(shard.Selector()),
		si.WithName("configmaps of this member"),        // the selector names a new member id each term; the name stays
		si.WithReflector(sharding.RetryTuning(c.Lease))) // refused (403)? back off a lease at most: a drain waits for us
	client, err2 := factory.RESTClient(corev1.SchemeGroupVersion)
	// Retries per key, at most a lease apart, and no queue-wide bucket of
	// ten a second: after a fault that failed every key, the drains off
	// this member wait for its retries (chapter 16).
	limiter, err3 := sharding.RetryLimiter(c.Lease)
	queue := workqueue.New(workqueue.Options[informer.Key]{RateLimiter: limiter})
	defer queue.ShutDown()
	_, err4 := cms.AddEventHandler(si.EnqueueKey[*corev1.ConfigMap](queue))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		logger.Error("informer", "err", err)
		return
	}
	base := liveHeap() // before the cache fills: what the cache adds is measured from here
	factory.Start(ctx)
	defer factory.Wait()
	go reportCache(ctx, cms, shard, base, rec)
	if factory.WaitForCacheSync(ctx) != nil {
		return
	}
	// The controller's work: here it only takes time. A real one would
	// read cms.Lister() and write through client.
	work := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		rec.say("B %s %s", shard.Member, key)
		defer rec.say("E %s %s", shard.Member, key)
		select {
		case <-ctx.Done(): // the term ended: stop now, the key goes back in the queue
			return workqueue.Result{}, ctx.Err()
		case <-time.After(c.Reconcile):
			return workqueue.Result{}, nil
		}
	}
	workqueue.Run(ctx, queue, sharding.Reconciler(shard, cms.Lister(), client, "configmaps", work),
		workqueue.RunOptions[informer.Key]{Workers: c.Workers})
}

// reportCache prints, every second, how many objects this member's
// cache holds, the process's live heap, and how much the live heap grew
// since the term began (base): the cache, mostly, and the queue.
func reportCache(ctx context.Context, cms *si.Informer[*corev1.ConfigMap], shard sharding.Shard, base uint64, rec *recorder) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		heap := liveHeap()
		rec.say("cache %s %d %d %d", shard.Member, len(cms.Lister().List(labels.Everything())), heap, int64(heap)-int64(base))
	}
}

// liveHeap is the bytes of live heap objects right after a collection:
// what the process holds, without the garbage RSS also counts.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// reportHeap prints the process's live heap after a collection, every second.
func reportHeap(ctx context.Context, name string, rec *recorder) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		rec.say("heap %s %d", name, liveHeap())
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
