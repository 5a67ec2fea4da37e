// Command 08-custom-resource runs an informer and a controller on a
// custom resource's own Go type: it installs the CRD of Widget
// (demo.listwatch.dev/v1), creates a few Widgets, and sets each one's
// status through the status subresource until every Widget's status
// matches its spec, then prints them.
//
//	go run ./08-custom-resource --namespace tour
//
// widget.go is the part to copy for a CRD of your own: the Go types, a
// DeepCopy that is deep, and AddToScheme registering the type and its
// list type.
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("08-custom-resource", "an informer and a controller on a custom resource's Go type", out)
	conn := cli.Register(fs, "listwatch-tour")
	count := fs.Int("widgets", 3, "Widgets to create")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	core, err := cli.CoreV1(cfg)
	if err != nil {
		return err
	}
	if err := cli.EnsureNamespace(ctx, core, conn.Namespace); err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := installCRD(ctx, core, discovery.ToDiscoveryInterfaceWithContext(disc)); err != nil {
		return err
	}

	// The scheme knows Widget and WidgetList; the factory finds the
	// resource (widgets) from the kind through discovery, as for a
	// built-in type.
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		return err
	}
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme})
	if err != nil {
		return err
	}
	widgets, err := si.InformerFor[*Widget](ctx, factory, si.InNamespace(conn.Namespace))
	if err != nil {
		return err
	}
	client, err := factory.RESTClient(GroupVersion) // typed writes of Widgets
	if err != nil {
		return err
	}
	for i := range *count {
		w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("widget-%d", i)},
			Spec: WidgetSpec{Size: i, Tags: map[string]string{"team": "a"}, Ports: []int32{8080}}}
		if err := client.Post().Namespace(conn.Namespace).Resource("widgets").Body(w).Do(ctx).Error(); err != nil {
			return fmt.Errorf("creating %s: %w", w.Name, err)
		}
	}
	ready, err := control(ctx, factory, widgets, client, *count)
	if err != nil {
		return err
	}
	for _, w := range ready {
		fmt.Fprintf(out, "%s: size %d, tags %v, ready %t, observed generation %d\n", w.Name, w.Spec.Size, w.Spec.Tags, w.Status.Ready, w.Status.ObservedGeneration)
	}
	return nil
}

// control runs the Widget controller until count Widgets have a status
// that matches their spec, and returns them, sorted by name. Its writes
// go through a read-your-writes guard, as every controller's should.
func control(ctx context.Context, factory *si.Factory, widgets *si.Informer[*Widget], client *rest.RESTClient, count int) ([]*Widget, error) {
	guard, err := readyourwrites.New(readyourwrites.Options{Name: "widgets"})
	if err != nil {
		return nil, err
	}
	ours := readyourwrites.Track(guard, widgets)
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	if _, err := widgets.AddEventHandler(si.EnqueueKey[*Widget](queue)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait(); factory.Wait(); queue.ShutDown() }()
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		return nil, err
	}
	settled := make(chan struct{})
	var once sync.Once
	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		w, err := widgets.Lister().Namespace(key.Namespace).Get(key.Name)
		if apierrors.IsNotFound(err) {
			return workqueue.Result{}, nil
		}
		if err != nil {
			return workqueue.Result{}, err
		}
		if want := statusFor(w); w.Status != want {
			updated := w.DeepCopy() // never modify the cache's copy
			updated.Status = want
			req := client.Put().Namespace(key.Namespace).Resource("widgets").Name(key.Name).SubResource("status").Body(updated)
			return workqueue.Result{}, ours.Write(ctx, key, req, updated)
		}
		if all := widgets.Lister().List(labels.Everything()); len(all) >= count && !slices.ContainsFunc(all, func(w *Widget) bool { return w.Status != statusFor(w) }) {
			once.Do(func() { close(settled) })
		}
		return workqueue.Result{}, nil
	}
	running.Go(func() {
		workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{Workers: 2, Gate: guard})
	})
	select {
	case <-settled:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	all := widgets.Lister().List(labels.Everything())
	slices.SortFunc(all, func(a, b *Widget) int { return strings.Compare(a.Name, b.Name) })
	return all, nil
}

// statusFor is the status w's spec calls for: ready once it has a size.
func statusFor(w *Widget) WidgetStatus {
	return WidgetStatus{Ready: w.Spec.Size > 0, ObservedGeneration: w.Generation}
}
