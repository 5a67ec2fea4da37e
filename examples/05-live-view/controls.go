package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
	"github.com/listwatch/informer/workqueue"
)

// controls are the page's buttons: each is a POST endpoint that does one
// thing and records it in the trace as a "control" event.
type controls struct {
	hub     *hub
	client  *rest.RESTClient
	proxy   *faultproxy.Proxy
	cfg     config
	ns      string
	slow    atomic.Int64 // how long the "audit" handler sleeps per call, in nanoseconds
	updates atomic.Int64 // numbers the updates, so each one changes the data
	workers *workers
}

func (c *controls) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/config", c.config)
	mux.HandleFunc("POST /api/create", c.do(c.create))
	mux.HandleFunc("POST /api/update", c.do(c.update))
	mux.HandleFunc("POST /api/delete", c.do(c.delete))
	mux.HandleFunc("POST /api/slow", c.do(c.setSlow))
	mux.HandleFunc("POST /api/workers", c.do(c.setWorkers))
	mux.HandleFunc("POST /api/cut", c.do(c.cut))
	mux.HandleFunc("POST /api/reconnect", c.do(c.reconnect))
	mux.HandleFunc("POST /api/compact", c.do(c.compact))
}

// config tells the page which controls work here, and why not.
func (c *controls) config(w http.ResponseWriter, _ *http.Request) {
	note := ""
	if c.cfg.etcd == "" {
		note = "Compact etcd needs --etcd: etcd is reachable only on the local control plane " +
			"(go run ./cmd/controlplane run --watch-cache=false), not in kind."
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"namespace": c.ns, "compact": c.cfg.etcd != "", "compactNote": note,
		"workers": c.workers.count(), "slowMs": time.Duration(c.slow.Load()).Milliseconds(),
		"outageMs": c.cfg.outage.Milliseconds(), "handlers": []string{"enqueue", "audit"},
	})
}

// do adapts a control to HTTP: form values in, 204 or the error's text out.
func (c *controls) do(f func(ctx context.Context, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := f(r.Context(), r); err != nil {
			c.hub.note("error", "%v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (c *controls) create(ctx context.Context, r *http.Request) error {
	name := r.FormValue("name")
	c.hub.note("create", "you create %s", name)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "live"}},
		Data:       map[string]string{"step": "created"},
	}
	return c.client.Post().Namespace(c.ns).Resource("configmaps").Body(cm).Do(ctx).Error()
}

func (c *controls) update(ctx context.Context, r *http.Request) error {
	name := r.FormValue("name")
	c.hub.note("update", "you update %s", name)
	body := fmt.Sprintf(`{"data":{"step":"update-%d"}}`, c.updates.Add(1))
	return c.client.Patch(types.MergePatchType).Namespace(c.ns).Resource("configmaps").Name(name).
		Body([]byte(body)).Do(ctx).Error()
}

func (c *controls) delete(ctx context.Context, r *http.Request) error {
	name := r.FormValue("name")
	c.hub.note("delete", "you delete %s", name)
	return c.client.Delete().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Error()
}

func (c *controls) setSlow(_ context.Context, r *http.Request) error {
	ms, err := strconv.Atoi(r.FormValue("ms"))
	if err != nil || ms < 0 || ms > 5000 {
		return fmt.Errorf("ms must be 0..5000, not %q", r.FormValue("ms"))
	}
	c.slow.Store(int64(time.Duration(ms) * time.Millisecond))
	c.hub.note("slow", "handler audit now takes %dms per call", ms)
	return nil
}

func (c *controls) setWorkers(_ context.Context, r *http.Request) error {
	n, err := strconv.Atoi(r.FormValue("n"))
	if err != nil || n < 1 || n > 8 {
		return fmt.Errorf("n must be 1..8, not %q", r.FormValue("n"))
	}
	c.hub.note("workers", "workqueue.Run restarts with %d workers", n)
	c.workers.set(n)
	return nil
}

// cut ends the informer's open watch, as a flaky network would, and refuses
// new connections for a while: the window in which a change can be missed.
//
// Its note is added once the connections are cut, so whoever sees it (the
// page's timeline, a test) knows the informer's watch has ended.
func (c *controls) cut(context.Context, *http.Request) error {
	c.proxy.Refuse(c.cfg.outage)
	n := c.proxy.CutAll()
	c.hub.note("cut", "proxy: cut %d connections, refusing new ones for %v", n, c.cfg.outage)
	return nil
}

// reconnect ends the outage a cut began, before its time is up: the
// informer's next attempt to watch gets through (the proxy listens again
// at once).
func (c *controls) reconnect(context.Context, *http.Request) error {
	c.proxy.Refuse(0)
	c.hub.note("reconnect", "proxy: the outage ends early; new connections get through")
	return nil
}

// compact makes etcd forget its history. With the watch cache off, the
// informer's next WATCH from its old resourceVersion is answered 410 Gone.
func (c *controls) compact(ctx context.Context, _ *http.Request) error {
	if c.cfg.etcd == "" {
		return fmt.Errorf("compact needs --etcd")
	}
	rev, err := testenv.CompactEtcd(ctx, c.cfg.etcd)
	if err == nil {
		c.hub.note("compact", "etcd: compacted to revision %d; history before it is gone", rev)
	}
	return err
}

// workers runs workqueue.Run over the queue, and restarts it to change the
// number of workers: Run takes its count once, and returns when its context
// is cancelled, after the reconciles in flight have returned.
type workers struct {
	parent    context.Context
	queue     *workqueue.Queue[informer.Key]
	reconcile workqueue.ReconcileFunc[informer.Key]

	mu     sync.Mutex         // serializes set and stop
	n      int                // guarded by mu; workers now running
	cancel context.CancelFunc // guarded by mu; stops the running Run
	done   chan struct{}      // guarded by mu; closed when that Run returned
}

func newWorkers(parent context.Context, q *workqueue.Queue[informer.Key], r workqueue.ReconcileFunc[informer.Key]) *workers {
	return &workers{parent: parent, queue: q, reconcile: r}
}

func (w *workers) set(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
	ctx, cancel := context.WithCancel(w.parent)
	done := make(chan struct{})
	go func() {
		workqueue.Run(ctx, w.queue, w.reconcile, workqueue.RunOptions[informer.Key]{Workers: n})
		close(done)
	}()
	w.n, w.cancel, w.done = n, cancel, done
}

func (w *workers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *workers) stopLocked() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
		w.cancel, w.n = nil, 0
	}
}

func (w *workers) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}
