// Command 05-live-view serves a web page on which you watch changes travel
// through an informer, live: the API server's LIST and WATCH, the DeltaFIFO,
// the indexer, two event handlers (each with its buffer) and a workqueue
// with its workers. Buttons on the page create, update and delete
// ConfigMaps, slow a handler down, change the number of workers, and, on
// the local control plane, cut the watch and compact etcd, so you see a
// relist and a delete whose final state is unknown.
//
//	go run ./05-live-view --namespace tour    # in examples/; then open http://127.0.0.1:8080
//
// On the local control plane, with the etcd controls: in the repository's
// root, then in examples/ from another terminal,
//
//	go run ./cmd/controlplane run --watch-cache=false    # prints the etcd URL, writes bin/kubeconfig
//	go run ./05-live-view --kubeconfig ../bin/kubeconfig --etcd http://127.0.0.1:NNNN
//
// The page is plain HTML, CSS and JavaScript in web/, embedded in the
// binary: no build step, nothing fetched from the internet.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

//go:embed web
var webFiles embed.FS

func main() { cli.Main(run) }

type config struct {
	addr   string        // where the page is served
	etcd   string        // etcd client URL; enables "compact"
	outage time.Duration // how long "cut watch" refuses new connections
	work   time.Duration // how long each reconcile pretends to work
}

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := cli.NewFlagSet("05-live-view", "watch changes travel through an informer's stages, live, in your browser", out)
	conn := cli.Register(flags, "listwatch-live")
	var c config
	flags.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to serve the page on (port 0: any free port)")
	flags.StringVar(&c.etcd, "etcd", "", "etcd client URL of the local control plane (go run ./cmd/controlplane run --watch-cache=false prints it): "+
		"enables the \"compact etcd\" button, so a re-watch is answered 410 Gone and the informer relists")
	flags.DurationVar(&c.outage, "outage", 2*time.Second, "how long \"cut watch\" refuses new connections after cutting the open ones")
	flags.DurationVar(&c.work, "work", 300*time.Millisecond, "how long each reconcile takes, so you can see keys wait in the workqueue")
	if err := flags.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	ns := conn.Namespace
	client, err := cli.CoreV1(cfg) // the page's writes go straight to the API server
	if err != nil {
		return err
	}
	if err := cli.EnsureNamespace(ctx, client, ns); err != nil {
		return err
	}

	// The informer's connection goes through a fault proxy, so that the page
	// can cut it. The proxy forwards bytes; TLS passes through untouched.
	proxy, viaProxy, err := cli.StartProxy(cfg)
	if err != nil {
		return err
	}
	defer proxy.Close()

	h := newHub(ns)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](viaProxy, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
	})
	if err != nil {
		return err
	}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Indexers:      map[string]indexer.IndexFunc[*corev1.ConfigMap]{"app": indexer.LabelIndexFunc[*corev1.ConfigMap]("app")},
		// A short backoff (default 800ms doubling to 30s), so that the page
		// shows the recovery within a second of an outage.
		Reflector: reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		Trace:     h.hook,
		OnError:   func(error) {}, // errors show up in the trace as "error" events
	})
	if err != nil {
		return err
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{Trace: h.hook}) // the same hook: one trace, end to end
	defer queue.ShutDown()

	ctl := &controls{hub: h, client: client, proxy: proxy, cfg: c, ns: ns}
	// Two handlers. "enqueue" is what a controller registers: it adds the
	// key and returns. "audit" stands for a handler that does real work in
	// its callback; the page can slow it down, and you will see its buffer
	// grow while "enqueue" keeps up: each handler has its own goroutine.
	enqueue := func(obj *corev1.ConfigMap) {
		if key, err := informer.KeyOf(obj); err == nil {
			queue.Add(key)
		}
	}
	regEnqueue, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(obj *corev1.ConfigMap, _ bool) { enqueue(obj) },
		UpdateFunc: func(_, obj *corev1.ConfigMap) { enqueue(obj) },
		DeleteFunc: func(obj *corev1.ConfigMap, _ bool) { enqueue(obj) },
	}, sharedinformer.HandlerOptions{Name: "enqueue"})
	if err != nil {
		return err
	}
	audit := func() { time.Sleep(time.Duration(ctl.slow.Load())) }
	regAudit, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(*corev1.ConfigMap, bool) { audit() },
		UpdateFunc: func(_, _ *corev1.ConfigMap) { audit() },
		DeleteFunc: func(*corev1.ConfigMap, bool) { audit() },
	}, sharedinformer.HandlerOptions{Name: "audit"})
	if err != nil {
		return err
	}

	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	informerDone := make(chan struct{})
	go func() { _ = inf.Run(runCtx); close(informerDone) }()
	defer func() { stopAll(); <-informerDone }()
	if err := sharedinformer.WaitForCacheSync(ctx, regEnqueue, regAudit); err != nil {
		return err
	}

	// The worker is level-triggered: it reads the cache, not the event.
	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		if cm, err := inf.Lister().Namespace(key.Namespace).Get(key.Name); err != nil {
			h.note("reconcile", "%s: not in the cache any more, so it is gone", key.Name)
		} else {
			h.note("reconcile", "%s: the cache says rv=%s data=%v", key.Name, cm.ResourceVersion, cm.Data)
		}
		select {
		case <-ctx.Done():
			return workqueue.Result{}, ctx.Err()
		case <-time.After(c.work):
			return workqueue.Result{}, nil
		}
	}
	ctl.workers = newWorkers(runCtx, queue, reconcile)
	defer ctl.workers.stop()
	ctl.workers.set(1)

	return serve(ctx, c.addr, h, ctl, out)
}

// serve serves the page, the trace stream and the controls until ctx is done.
func serve(ctx context.Context, addr string, h *hub, ctl *controls, out io.Writer) error {
	static, err := fs.Sub(webFiles, "web")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	mux.Handle("GET /events", h)
	ctl.register(mux)

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(out, "Serving the live view on http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx) // open event streams end with ctx (BaseContext)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
