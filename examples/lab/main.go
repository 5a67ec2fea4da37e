// Command lab is the operator lab: the StarRocks experiment, reproduced on
// this library.
//
// The StarRocks operator stalled once a cluster held many StarRocksCluster
// resources, and three values hard-coded in it were to blame: one reconcile
// worker, a resync every two minutes, and controller-runtime's client rate
// limit of 20 requests a second (burst 30). This program lets you turn the
// same three knobs on an operator of your own and measure what each does.
//
// What it does, in order:
//
//  1. installs a CRD, kind Cluster in group lab.listwatch.dev, whose spec
//     sizes the components fe, cn and be;
//  2. creates --crs Clusters, as a user would, from a client of its own;
//  3. starts the operator: an informer over the Clusters (unstructured, no
//     generated types), an informer over their ConfigMaps, a workqueue and
//     --max-concurrent-reconciles workers. Each reconcile creates one
//     ConfigMap per component (no kubelet needed) and writes the Cluster's
//     status;
//  4. times it until every Cluster has converged, and counts every request
//     its client sends and every wait its rate limiter imposes;
//  5. lets it idle for --idle with nothing changing, and counts again.
//
// Run it against kind (`kind create cluster`) or the local control plane
// (`make cluster`, then, in examples/, --kubeconfig ../bin/kubeconfig):
//
//	go run ./lab --crs=50 --rtt=200ms
//	go run ./lab --crs=50 --rtt=200ms --max-concurrent-reconciles=50 --kube-api-qps=100 --kube-api-burst=200
//	go run ./lab --compare
//
// Read bound.go for the arithmetic that predicts every figure it prints.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/examples/internal/cli"
)

func main() { cli.Main(run) }

// run is the whole program, with its arguments and output passed in so
// that a test can call it.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("lab", "the StarRocks operator experiment: workers, resync period and QPS/Burst, measured", out)
	conn := cli.Register(fs, "listwatch-lab")
	var (
		s          settings
		qps        float64
		components string
		compare    bool
		svg        string
	)
	// The post's three knobs, with the post's defaults.
	fs.IntVar(&s.workers, "max-concurrent-reconciles", 1, "reconcile workers (controller-runtime's MaxConcurrentReconciles)")
	fs.DurationVar(&s.syncPeriod, "sync-period", 2*time.Minute, "resync period: every Cluster is reconciled again this often, from the cache; 0 turns it off")
	fs.Float64Var(&qps, "kube-api-qps", 0, "client requests per second; 0 means controller-runtime's 20")
	fs.IntVar(&s.burst, "kube-api-burst", 0, "client burst; 0 means controller-runtime's 30")
	// The lab's own.
	fs.IntVar(&s.crs, "crs", 50, "how many Clusters to create")
	fs.DurationVar(&s.rtt, "rtt", 0, "round trip added to every request by a proxy in front of the API server (the post's \"100ms\" was each way: --rtt=200ms)")
	fs.BoolVar(&s.naive, "naive", false, "GET everything from the API and write every time, as the post's operator did; default: read the cache, write on drift")
	fs.StringVar(&components, "components", "fe,cn,be", "the components of a Cluster, one ConfigMap each: more components, more calls per reconcile")
	fs.DurationVar(&s.idle, "idle", 5*time.Minute, "after all are reconciled, count requests this long with nothing changing; 0 skips it")
	fs.DurationVar(&s.timeout, "timeout", 10*time.Minute, "give up waiting for the Clusters to converge after this long")
	fs.BoolVar(&s.progress, "progress", isTerminal(out), "show a progress bar (default: only when the output is a terminal)")
	fs.BoolVar(&s.cleanup, "cleanup", true, "delete the run's Clusters and ConfigMaps at the end")
	fs.BoolVar(&compare, "compare", false, "run the post's configurations side by side and print a table and a chart")
	fs.StringVar(&svg, "svg", filepath.Join("bin", "lab.svg"), "with --compare: where to write the chart (its directory is created)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// rest's own QPS 0 means 5 (burst 10), not controller-runtime's 20/30:
	// the StarRocks operator got 20/30 from controller-runtime, so we set
	// them here explicitly.
	s.qps = float32(qps)
	if s.qps == 0 {
		s.qps = 20
	}
	if s.burst == 0 {
		s.burst = 30
	}
	for c := range strings.SplitSeq(components, ",") {
		if c = strings.TrimSpace(c); c != "" {
			s.components = append(s.components, c)
		}
	}
	switch {
	case len(s.components) == 0:
		return errors.New("--components: name at least one")
	case s.crs < 1:
		return errors.New("--crs: at least 1")
	case s.qps < 0:
		return errors.New("--kube-api-qps: the post's knob has no \"unlimited\"; use a large value")
	}

	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	e, err := setUp(ctx, cfg, conn.Namespace)
	if err != nil {
		return err
	}
	if s.cleanup {
		defer e.tearDown(out)
	}
	fmt.Fprintln(out, plan(s, compare))
	if compare {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		return runCompare(ctx, e, s, set, svg, out)
	}
	s.name = "run"
	r, err := runOnce(ctx, e, s, out)
	if err != nil {
		return err
	}
	report(out, r)
	if r.timedOut {
		return fmt.Errorf("only %d of %d Clusters converged within --timeout=%s", r.t.converged, s.crs, s.timeout)
	}
	return nil
}

// setUp makes the namespace and the CRD, and the user's clients, which
// are not limited (QPS -1 turns rest's limiter off) and not metered.
func setUp(ctx context.Context, cfg *rest.Config, ns string) (env, error) {
	user := rest.CopyConfig(cfg)
	user.QPS = -1
	core, err := cli.CoreV1(user)
	if err != nil {
		return env{}, err
	}
	existed := core.Get().Resource("namespaces").Name(ns).Do(ctx).Error() == nil
	if err := cli.EnsureNamespace(ctx, core, ns); err != nil {
		return env{}, err
	}
	createdCRD, err := installCRD(ctx, user)
	if err != nil {
		return env{}, err
	}
	clusters, err := jsonClient(user, clustersGVR.GroupVersion())
	if err != nil {
		return env{}, err
	}
	return env{cfg: cfg, user: user, ns: ns, clusters: clusters, core: core, createdNS: !existed, createdCRD: createdCRD}, nil
}

// tearDown removes what setUp created: the CRD and the namespace, each
// only if this run created it (another run may still be using it).
func (e env) tearDown(out io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.createdCRD {
		if err := deleteCRD(ctx, e.user); err != nil {
			fmt.Fprintln(out, "cleanup:", err)
		}
	}
	if e.createdNS {
		if err := e.core.Delete().Resource("namespaces").Name(e.ns).Do(ctx).Error(); err != nil && !apierrors.IsNotFound(err) {
			fmt.Fprintln(out, "cleanup: deleting namespace", e.ns+":", err)
		}
	}
}

// plan says, before anything runs, what the run will do and how long its
// fixed parts take, so that five quiet minutes of idle counting are no
// surprise.
func plan(s settings, compare bool) string {
	idle := fmt.Sprintf("then counts idle traffic for %s (--idle; 0 skips it)", s.idle)
	if s.idle <= 0 {
		idle = "with no idle counting (--idle=0)"
	}
	if compare {
		return fmt.Sprintf("Comparing the post's configurations: each converges its Clusters (up to --timeout=%s each), %s.", s.timeout, idle)
	}
	return fmt.Sprintf("This run converges %d Clusters (up to --timeout=%s), %s.", s.crs, s.timeout, idle)
}

// isTerminal reports whether out is a terminal, where a progress bar can
// redraw itself; in a file or a pipe it would only add noise.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
