// Command 06-metrics serves the metrics a controller's informer and
// workqueue export, in Prometheus' format, at /metrics: client-go's
// workqueue_* and informer_* names, and this library's listwatch_*.
// It runs an informer of ConfigMaps in one namespace and a queue its
// handler fills, creates a few ConfigMaps, and serves until you stop it.
//
//	go run ./06-metrics --namespace tour
//	curl -s localhost:9090/metrics | grep -E '^(workqueue|informer|listwatch)_'
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/metrics"
	informerprom "github.com/listwatch/informer/metrics/prometheus"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("06-metrics", "serve an informer's and a workqueue's metrics at /metrics, in Prometheus' format", out)
	conn := cli.Register(fs, "listwatch-tour")
	listen := fs.String("listen", "127.0.0.1:9090", "address to serve /metrics on")
	objects := fs.Int("objects", 3, "ConfigMaps to create, so there is something to count")
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
	if err := cli.EnsureNamespace(ctx, client, conn.Namespace); err != nil {
		return err
	}
	for i := range *objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("metrics-%d", i)}}
		err := client.Post().Namespace(conn.Namespace).Resource("configmaps").Body(cm).Do(ctx).Error()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Serving http://%s/metrics until you stop it (Ctrl-C).\n", ln.Addr())
	return serve(ctx, cfg, conn.Namespace, ln)
}

// serve runs the controller's machinery with metrics and serves them on ln
// until ctx ends.
func serve(ctx context.Context, cfg *rest.Config, namespace string, ln net.Listener) error {
	defer ln.Close() // on the early returns; server.Close closes it otherwise
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One Prometheus registry, wrapped as the library's Provider by the
	// adapter module (github.com/listwatch/informer/metrics/prometheus);
	// one metrics.Registry over it, given to everything that exports.
	prom := prometheus.NewRegistry()
	provider, err := informerprom.New(prom)
	if err != nil {
		return err
	}
	reg, err := metrics.NewRegistry(provider)
	if err != nil {
		return err
	}

	// The factory exports every informer it makes, labelled with the
	// informer's name ("configmaps in namespace tour, protobuf") and resource.
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme, Metrics: reg})
	if err != nil {
		return err
	}
	cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace(namespace))
	if err != nil {
		return err
	}

	// The queue exports under the name you give it: the `name` label.
	qm, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
	if err != nil {
		return err
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{Trace: qm.Hook()})
	_, err = cms.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue), sharedinformer.HandlerOptions{Name: "enqueue"})
	if err != nil {
		return err
	}

	server := &http.Server{Handler: promhttp.HandlerFor(prom, promhttp.HandlerOpts{})}
	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()

	factory.Start(ctx)
	var background sync.WaitGroup
	background.Go(func() { qm.Run(ctx) }) // the two gauges of work in progress, every 500ms
	background.Go(func() { <-ctx.Done(); queue.ShutDown() })
	err = factory.WaitForCacheSync(ctx) // never reconcile from a partial cache
	if err == nil {
		workqueue.Run(ctx, queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			return workqueue.Result{}, nil // a real controller reconciles here, reading through cms.Lister()
		}, workqueue.RunOptions[informer.Key]{Workers: 2})
	}
	cancel() // Run returned, or the sync failed: stop everything
	factory.Wait()
	background.Wait()
	if err := server.Close(); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return nil // asked to stop before the cache synced
	}
	return err
}
