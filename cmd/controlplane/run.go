package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/listwatch/informer/testenv"
)

// run starts a control plane, writes a kubeconfig for it and waits for
// ctx (Ctrl-C) to end; then it stops the apiserver, then etcd.
//
//	controlplane run                  # then, in another terminal:
//	export KUBECONFIG=$PWD/bin/kubeconfig
//	kubectl get namespaces            # or any client-go program
func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := newFlagSet("run", "controlplane run: run etcd + kube-apiserver until Ctrl-C and write a kubeconfig for them", out)
	kubeconfig := fs.String("kubeconfig-out", "bin/kubeconfig", "where to write the kubeconfig for this control plane")
	watchCache := fs.Bool("watch-cache", true, "run kube-apiserver with its watch cache; false lets etcd compaction produce real 410 Gone answers")
	audit := fs.Bool("audit", false, "write an audit log of every request into the control plane's directory")
	rbac := fs.Bool("rbac", false, "authorize with RBAC instead of AlwaysAllow")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	opts := testenv.Options{DisableWatchCache: !*watchCache, Audit: *audit, RBAC: *rbac}

	start := time.Now()
	cp, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	path, err := filepath.Abs(*kubeconfig)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := cp.WriteKubeconfig(path); err != nil {
		return err
	}
	defer os.Remove(path) // it points at ports that die with us

	fmt.Fprintf(out, `local control plane ready in %v
  kube-apiserver  https://%s
  etcd            %s
  data and logs   %s
  kubeconfig      %s

Use it from another terminal:
  export KUBECONFIG=%s
  kubectl get namespaces        # or any client-go program that reads KUBECONFIG

%s
Ctrl-C stops it.
`, time.Since(start).Round(time.Millisecond), cp.Addr(), cp.EtcdURL(), cp.Dir(), path, path, relistHint(*watchCache, path, cp.EtcdURL()))

	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping kube-apiserver, then etcd ...")
	return nil
}

// relistHint is the command that shows a real 410 and a relist in the
// event-trace example, which needs the watch cache off.
func relistHint(watchCache bool, kubeconfig, etcdURL string) string {
	if watchCache {
		return "To see a real 410 Gone and a relist in examples/02-event-trace, restart with\n" +
			"--watch-cache=false: with the watch cache on, compacting etcd gives no 410.\n"
	}
	return fmt.Sprintf("To see a real 410 Gone and a relist, in examples/:\n"+
		"  go run ./02-event-trace --kubeconfig %s --etcd %s\n", kubeconfig, etcdURL)
}
