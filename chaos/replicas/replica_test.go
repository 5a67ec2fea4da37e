package replicas

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// replicaEnv, when set, makes the test binary a replica process instead
// of the checker; its value is the replicaConfig as JSON.
const replicaEnv = "CHAOS_REPLICA"

// rings are the two rings every replica is a member of. Their names share
// a prefix on purpose: a sharder that finds its ring's Leases by name
// prefix reads the other ring's as its own.
var rings = []string{"web", "web-api"}

// replicaConfig is what the checker tells a replica process.
type replicaConfig struct {
	Name      string // the process's name: sharder identity, and the prefix of its member ids
	Namespace string // holds the objects and every Lease
	Host      string // the replica's own fault proxy
	Token     string // the RBAC-limited user's
	CA        []byte
	Timing    timing
}

// timing is the Lease timing of every member and sharder, and the
// replicas' work.
type timing struct {
	Lease, Renew, Retry time.Duration
	Work                time.Duration // how long a reconcile works between its read and its writes
	QPS                 float64       // each replica's client QPS (Burst twice that)
}

// replicaMain runs one replica until its stdin closes or it receives
// SIGTERM, and returns its exit status.
func replicaMain(encoded string) int {
	rec := &recorder{out: os.Stdout}
	var c replicaConfig
	if err := json.Unmarshal([]byte(encoded), &c); err != nil {
		rec.say("error %q", err.Error())
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	if err := runReplica(ctx, c, rec); err != nil {
		rec.say("error %q", err.Error())
		return 1
	}
	return 0
}

// runReplica runs, for each ring, a member and a sharder candidate until
// ctx ends, and returns once all of them have stopped.
func runReplica(ctx context.Context, c replicaConfig, rec *recorder) error {
	cfg := &rest.Config{Host: "https://" + c.Host, BearerToken: c.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CA}}
	cfg.QPS, cfg.Burst = float32(c.Timing.QPS), int(2*c.Timing.QPS)
	leases, err := leaderelection.NewClient(cfg)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("replica", c.Name)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, ring := range rings {
		sharder, err := sharding.NewSharder(sharding.SharderConfig{
			Config: cfg, LeaseClient: leases, LeaseNamespace: c.Namespace, Ring: ring, Identity: c.Name,
			Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: c.Namespace,
			LeaseDuration: c.Timing.Lease, RenewDeadline: c.Timing.Renew, RetryPeriod: c.Timing.Retry, Logger: logger,
			OnLabel: func(action string, key informer.Key, member string) {
				rec.say("label %s %s %s %s", ring, action, key, orDash(member))
			},
			OnLeading: func(leading bool) { rec.say("leading %s %t", ring, leading) },
		})
		if err != nil {
			return err
		}
		member, err := sharding.NewMember(sharding.MemberConfig{
			Client: leases, Namespace: c.Namespace, Ring: ring, Name: c.Name,
			LeaseDuration: c.Timing.Lease, RenewDeadline: c.Timing.Renew, RetryPeriod: c.Timing.Retry, Logger: logger,
			Run: func(ctx context.Context, shard sharding.Shard) {
				term, ok := leaderelection.TermOf(ctx)
				if !ok {
					rec.say("error %q", "the member's context carries no leaderelection.Term")
					return
				}
				rec.say("member %s %s", ring, shard.Member)
				defer func() { rec.say("stopped %s %s %d", ring, shard.Member, term.End().UnixNano()) }()
				runTerm(ctx, cfg, c, shard, term, rec, logger)
			},
		})
		if err != nil {
			return err
		}
		wg.Go(func() { sharder.Run(ctx) })
		wg.Go(func() { member.Run(ctx) })
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
