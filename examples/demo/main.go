// Command demo is what `make demo` runs: it starts the local control plane
// (watch cache off, so that a compacted etcd answers a real 410 Gone), runs
// a short tour of the examples against it, prints where to go next, and
// stops everything. After the first build of the control plane it takes
// about a minute.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/testenv"
)

func main() { cli.Main(run) }

// step is one example program to run, with the point it makes.
type step struct {
	title string
	pkg   string
	args  []string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("demo", "start a local control plane, run the tour and the lab against it, stop everything", out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo takes no arguments, got %q", fs.Args())
	}

	fmt.Fprintln(out, "Starting a local etcd and kube-apiserver (watch cache off) ...")
	start := time.Now()
	cp, err := testenv.Start(ctx, testenv.Options{DisableWatchCache: true})
	if err != nil {
		return err
	}
	defer cp.Stop()
	fmt.Fprintf(out, "Ready in %v at https://%s.\n", time.Since(start).Round(time.Millisecond), cp.Addr())

	kubeconfig := []string{"--kubeconfig", cp.KubeconfigPath()}
	steps := []step{
		{"One change, traced through every stage; then a cut watch and a missed delete",
			"./02-event-trace", append([]string{"--namespace", "demo-trace", "--etcd", cp.EtcdURL()}, kubeconfig...)},
		{"A controller done right: keys, workers, reconcile from the cache, expectations",
			"./04-controller", append([]string{"--namespace", "demo-controller"}, kubeconfig...)},
		{"The operator lab: the three knobs, side by side (small sizes)",
			"./lab", append(labArgs(), kubeconfig...)},
	}
	for i, s := range steps {
		fmt.Fprintf(out, "\n======== %d/%d  %s\n======== go run %s\n\n", i+1, len(steps), s.title, s.pkg)
		cmd := exec.CommandContext(ctx, "go", append([]string{"run", s.pkg}, s.args...)...)
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", s.pkg, err)
		}
	}

	fmt.Fprint(out, `
======== Where to go next
  docs/README.md          the tutorial, chapter by chapter, in data-flow order
  docs/10-pitfalls.md     the seven pitfalls and the tests that show them
  cd examples; go run ./01-raw-watch  each example against kind (kind create cluster) or make cluster
  make test               every claim above, tested against a real control plane

Stopping kube-apiserver, then etcd.
`)
	return nil
}

// labArgs are the lab's flags for a comparison small enough for a demo.
func labArgs() []string {
	return []string{"--namespace", "demo-lab", "--crs", "10", "--compare", "--progress=false",
		"--idle", "5s", "--sync-period", "10s", "--svg", "../bin/lab.svg"}
}
