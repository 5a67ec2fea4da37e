// Command 07-dynamic-watcher keeps one metadata-only informer for every
// custom resource the cluster serves, and prints what each one caches.
// It follows the CustomResourceDefinitions themselves with an informer:
// a CRD installed starts an informer for its resource, a CRD deleted
// releases it, and a CRD whose served version changes (v1alpha1 to v1)
// releases the old version's informer and starts one for the new.
//
// It is a controller like 04-controller, whose objects are CRDs and whose
// "children" are informers: handlers enqueue a CRD's name, one worker
// compares the informer it has for that CRD with the one it should have,
// and asks the factory for it or releases it (chapter 06, "The life of
// an informer").
//
//	go run ./07-dynamic-watcher
//	kubectl apply -f some-crd.yaml   # in another terminal; then create objects of it
package main

import (
	"context"
	"io"

	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/kubeconfig"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("07-dynamic-watcher", "keep a metadata-only informer for every custom resource installed, following CRDs as they come and go", out)
	var conn kubeconfig.Flags // no --namespace: it watches every namespace
	conn.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	w, err := newWatcher(ctx, cfg, out)
	if err != nil {
		return err
	}
	return w.run(ctx)
}
