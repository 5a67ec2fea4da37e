// Command sharded runs a sharded controller: every replica active, each
// owning and caching part of the ConfigMaps of a namespace (package
// sharding; docs/16-sharding.md).
//
// It starts --replicas replica processes (this program again, with
// --role=replica), each a member of the ring and a sharder candidate,
// creates --objects ConfigMaps, touches them at --update-rate, and hands
// objects over three ways while it records, from the replicas' own output
// on this host's clock, every reconcile and every label write:
//
//  1. a replica is killed (SIGKILL): its objects move to the others;
//  2. a replica joins, and while the sharder drains objects to it, the
//     sharder's own process is killed: another replica's sharder resumes;
//  3. a replica is cut off (a blackholed fault proxy): it stops
//     reconciling by its renew deadline, its objects move, and when healed
//     it joins again as a new member.
//
// Then it checks what sharding promises (see check.go) and prints the
// figures: takeover after the kill, rebalance after the join, the
// per-replica caches. With --scenario=steady it measures one fixed
// workload instead, for the scale-out table of the chapter.
//
//	go run ./sharded --kubeconfig ../bin/kubeconfig        # the full-size run
//	go run ./sharded --kubeconfig ../bin/kubeconfig --scenario=steady --replicas=2
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/listwatch/informer/examples/internal/cli"
)

func main() {
	if replicaArgs := os.Getenv(replicaEnv); replicaArgs != "" {
		os.Exit(replicaMain(replicaArgs)) // a replica process started by the demo
	}
	cli.Main(run)
}

// settings are the demo's flags; the replicas receive the ones they need.
type settings struct {
	conn       *cli.Flags
	objects    int
	replicas   int
	updateRate float64
	reconcile  time.Duration
	workers    int
	lease      time.Duration
	renew      time.Duration
	retry      time.Duration
	qps        float64
	scenario   string
	duration   time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("sharded", "a sharded controller: every replica active, each owning part of the objects", out)
	s := settings{conn: cli.Register(fs, "listwatch-sharded")}
	fs.IntVar(&s.objects, "objects", 30000, "ConfigMaps to shard")
	fs.IntVar(&s.replicas, "replicas", 3, "replica processes at the start")
	fs.Float64Var(&s.updateRate, "update-rate", 100, "object updates per second while it runs")
	fs.DurationVar(&s.reconcile, "reconcile", 200*time.Millisecond, "how long each reconcile works")
	fs.IntVar(&s.workers, "workers", 100, "reconcile workers per replica")
	fs.DurationVar(&s.lease, "lease", 4*time.Second, "LeaseDuration of the shard Leases and the sharder's")
	fs.DurationVar(&s.renew, "renew", 3*time.Second, "RenewDeadline")
	fs.DurationVar(&s.retry, "retry", 500*time.Millisecond, "RetryPeriod")
	fs.Float64Var(&s.qps, "qps", 500, "client QPS of every replica (Burst: twice that): bounds the sharder's PATCH rate")
	fs.StringVar(&s.scenario, "scenario", "handovers", "handovers (kill, join with a sharder kill, blackhole) or steady (measure one workload)")
	fs.DurationVar(&s.duration, "duration", 30*time.Second, "with --scenario=steady, how long to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return demo(ctx, s, out)
}
