// Command cluster runs the local control plane (etcd and kube-apiserver,
// built by `make tools`) in the foreground until you press Ctrl-C, and
// writes a kubeconfig for it. `make cluster` runs it.
//
//	make cluster                      # then, in another terminal:
//	export KUBECONFIG=$PWD/bin/kubeconfig
//	kubectl get namespaces            # or any client-go program
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/listwatch/informer/testenv"
)

func main() {
	out := flag.String("kubeconfig-out", "bin/kubeconfig", "where to write the kubeconfig for this control plane")
	watchCache := flag.Bool("watch-cache", true, "run kube-apiserver with its watch cache; false lets etcd compaction produce real 410 Gone answers")
	audit := flag.Bool("audit", false, "write an audit log of every request into the control plane's directory")
	rbac := flag.Bool("rbac", false, "authorize with RBAC instead of AlwaysAllow")
	flag.Parse()
	if err := run(*out, testenv.Options{DisableWatchCache: !*watchCache, Audit: *audit, RBAC: *rbac}); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, opts testenv.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	start := time.Now()
	cp, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Stop()
	if kubeconfig, err = filepath.Abs(kubeconfig); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o755); err != nil {
		return err
	}
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	defer os.Remove(kubeconfig) // it points at ports that die with us

	fmt.Printf(`local control plane ready in %v
  kube-apiserver  https://%s
  etcd            %s
  data and logs   %s
  kubeconfig      %s

Use it from another terminal:
  export KUBECONFIG=%s
  kubectl get namespaces        # or any client-go program that reads KUBECONFIG

Ctrl-C stops it.
`, time.Since(start).Round(time.Millisecond), cp.Addr(), cp.EtcdURL(), cp.Dir(), kubeconfig, kubeconfig)

	<-ctx.Done()
	fmt.Println("\nstopping kube-apiserver, then etcd ...")
	return nil
}
