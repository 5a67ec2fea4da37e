// Command 02-event-trace follows one change through every stage of an
// informer and a workqueue, printing what each stage did with it: the watch
// event and its resourceVersion, the delta queued, the cache write, each
// handler's delivery, the workqueue add, the worker's reconcile. Then it cuts
// the watch (through a fault proxy in front of the API server) so you see the
// re-watch, and cuts it for longer while deleting an object, so you see what
// a reconnecting informer makes of a change it missed.
//
//	go run ./02-event-trace --namespace tour
//
// One TraceHook, given to the informer and the workqueue, sees everything.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
	"github.com/listwatch/informer/workqueue"
)

func main() { cli.Main(run) }

type config struct {
	cutAfter time.Duration // wait this long, then cut the watch; 0 skips step 4
	outage   time.Duration // refuse connections this long while deleting; 0 skips step 5
	etcd     string        // etcd client URL: compact during the outage for a real 410
	work     time.Duration // how long each reconcile pretends to work
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("02-event-trace", "follow one change through every stage of an informer and a workqueue", out)
	conn := cli.Register(fs, "listwatch-tour")
	var c config
	fs.DurationVar(&c.cutAfter, "cut-after", time.Second, "after the burst, wait this long and cut the watch connection (0: don't)")
	fs.DurationVar(&c.outage, "outage", 2*time.Second, "refuse connections this long while an object is deleted (0: skip that step)")
	fs.StringVar(&c.etcd, "etcd", "", "etcd client URL of the local control plane (go run ./cmd/controlplane run --watch-cache=false prints it): "+
		"compact etcd during the outage, so the re-watch is answered 410 Gone and the informer relists")
	fs.DurationVar(&c.work, "work", 300*time.Millisecond, "how long each reconcile takes, so you can see the workqueue merge keys")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conn.Load()
	if err != nil {
		return err
	}
	ns := conn.Namespace
	client, err := cli.CoreV1(cfg) // our own writes go straight to the API server
	if err != nil {
		return err
	}
	if err := cli.EnsureNamespace(ctx, client, ns); err != nil {
		return err
	}
	deleteOurs := func(ctx context.Context) {
		for _, name := range []string{"before", "demo", "doomed"} {
			_ = client.Delete().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Error()
		}
	}
	deleteOurs(ctx) // a clean slate from an earlier run
	defer func() {  // and nothing of ours left behind, even after Ctrl-C
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		deleteOurs(ctx)
	}()

	// The informer's connection goes through a fault proxy, so we can cut it.
	// The proxy forwards bytes; TLS passes through it untouched.
	proxy, viaProxy, err := cli.StartProxy(cfg)
	if err != nil {
		return err
	}
	defer proxy.Close()

	rec := newRecorder(ns)
	stopPrinting := make(chan struct{})
	printed := make(chan struct{})
	go func() { rec.print(out, stopPrinting); close(printed) }()
	defer func() { close(stopPrinting); <-printed }()

	fmt.Fprintf(out, "Tracing ConfigMaps in %s (keys below are shown without the namespace).\n", ns)
	fmt.Fprintln(out, "Columns: time since start, stage, what it did, key, resourceVersion, detail.")

	// One ConfigMap exists before the informer starts: it comes in with the
	// first LIST, not as a watch event.
	if err := create(ctx, client, ns, "before"); err != nil {
		return err
	}

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
		// A label index, so you can see the indexer file the object under it.
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"app": indexer.LabelIndexFunc[*corev1.ConfigMap]("app")},
		// We shorten the reflector's backoff (default 800ms doubling to 30s)
		// so that the demo recovers within a second of an outage.
		Reflector: reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		Trace:     rec.hook,
		OnError:   func(error) {}, // errors show up in the trace as "error" events
	})
	if err != nil {
		return err
	}

	// The workqueue gets the same hook: one trace, end to end.
	queue := workqueue.New(workqueue.Options[informer.Key]{Trace: rec.hook})
	defer queue.ShutDown()

	// Two handlers, so you see one delivery per handler. "enqueue" does what
	// a controller's handler should do and nothing more: add the key.
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
	// "narrate" speaks up only for deletes, to show you the flag that says
	// whether the informer saw the delete or inferred it from a relist.
	regNarrate, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		DeleteFunc: func(obj *corev1.ConfigMap, finalStateUnknown bool) {
			rec.say("          >> narrate: OnDelete(%s, finalStateUnknown=%v)", obj.Name, finalStateUnknown)
		},
	}, sharedinformer.HandlerOptions{Name: "narrate"})
	if err != nil {
		return err
	}

	runCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	informerDone := make(chan struct{})
	go func() { _ = inf.Run(runCtx); close(informerDone) }()
	defer func() { stopAll(); <-informerDone }()

	rec.say("\n== 1. The first LIST fills the cache (\"before\" arrives as Replaced, not as a watch event).")
	if err := sharedinformer.WaitForCacheSync(ctx, regEnqueue, regNarrate); err != nil {
		return err
	}
	// The worker: level-triggered, it reads the cache, not the event.
	workersDone := make(chan struct{})
	go func() {
		workqueue.Run(runCtx, queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			cm, err := inf.Lister().Namespace(key.Namespace).Get(key.Name)
			if err != nil {
				rec.say("          >> reconcile %s: not in the cache any more, so it is gone", key.Name)
			} else {
				rec.say("          >> reconcile %s: the cache says data=%v", key.Name, cm.Data)
			}
			select {
			case <-ctx.Done():
			case <-time.After(c.work):
			}
			return workqueue.Result{}, nil
		}, workqueue.RunOptions[informer.Key]{Workers: 1})
		close(workersDone)
	}()
	defer func() { stopAll(); <-workersDone }()
	if err := waitDone(ctx, rec, 0, "before"); err != nil {
		return err
	}

	return tour(ctx, c, rec, client, proxy, ns)
}

// tour makes the changes, one step at a time, and reads the trace to tell
// you what happened.
func tour(ctx context.Context, c config, rec *recorder, client *rest.RESTClient, proxy *faultproxy.Proxy, ns string) error {
	rec.say("\n== 2. You create \"demo\". Follow it: watch event → delta → cache → each handler → workqueue → worker.")
	m := rec.mark()
	if err := create(ctx, client, ns, "demo"); err != nil {
		return err
	}
	if err := waitDone(ctx, rec, m, "demo"); err != nil {
		return err
	}

	rec.say("\n== 3. Three quick updates to \"demo\". The worker is busy (--work), so the workqueue merges")
	rec.say("   the adds: \"postponed\" and \"deduplicated\" mean a key already waiting was not queued twice.")
	m = rec.mark()
	for i := 1; i <= 3; i++ {
		if err := patch(ctx, client, ns, "demo", fmt.Sprintf("update-%d", i)); err != nil {
			return err
		}
	}
	// Wait for the three MODIFIED events, then for the dust to settle.
	for rec.count(m, rec.is(informer.StageReflector, reflector.KindWatchEvent, "demo")) < 3 {
		if _, err := rec.waitFor(ctx, rec.mark(), 30*time.Second, rec.is(informer.StageReflector, reflector.KindWatchEvent, "demo")); err != nil {
			return err
		}
	}
	if err := waitIdle(ctx, rec, c.work); err != nil {
		return err
	}

	if c.cutAfter > 0 {
		time.Sleep(c.cutAfter)
		rec.say("\n== 4. We cut the informer's connection, as a flaky network would, and update \"demo\" meanwhile.")
		m = rec.mark()
		rec.say("          >> proxy: cutting every connection")
		proxy.CutAll()
		if err := patch(ctx, client, ns, "demo", "after-cut"); err != nil {
			return err
		}
		if err := waitDone(ctx, rec, m, "demo"); err != nil {
			return err
		}
		w, _ := rec.find(m, rec.is(informer.StageReflector, reflector.KindWatch, ""))
		if _, relisted := rec.find(m, rec.is(informer.StageReflector, reflector.KindRelist, "")); relisted {
			rec.say("   Verdict: the reflector relisted (see its reason above).")
		} else {
			rec.say("   Verdict: the reflector re-watched from rv=%s, the last resourceVersion it had seen, and the", w.ResourceVersion)
			rec.say("   server replayed the change made while it was away. No relist: nothing was missed.")
		}
	}

	if c.outage > 0 {
		if err := outage(ctx, c, rec, client, proxy, ns); err != nil {
			return err
		}
	}

	rec.mute()
	rec.say("\n== Per key, what each stage did (more events than pops, or more adds than reconciles, is coalescing):")
	var b strings.Builder
	rec.summary(&b, "before", "demo", "doomed")
	rec.say("%s", strings.TrimRight(b.String(), "\n"))
	rec.say("\nNext: go run ./03-lister-and-index")
	return nil
}

// outage refuses the informer's connections for c.outage while "doomed" is
// deleted, then reads the trace to tell you how the informer learned of it.
func outage(ctx context.Context, c config, rec *recorder, client *rest.RESTClient, proxy *faultproxy.Proxy, ns string) error {
	rec.say("\n== 5. \"doomed\" exists; then the network goes down for %v, and while it is down, \"doomed\" is deleted.", c.outage)
	m := rec.mark()
	if err := create(ctx, client, ns, "doomed"); err != nil {
		return err
	}
	if err := waitDone(ctx, rec, m, "doomed"); err != nil {
		return err
	}
	m = rec.mark()
	rec.say("          >> proxy: refusing new connections for %v (longer if the writes below take longer), and cutting the open one", c.outage)
	down := time.Now()
	proxy.Refuse(time.Hour) // shortened below, once the writes are done
	proxy.CutAll()
	if err := client.Delete().Namespace(ns).Resource("configmaps").Name("doomed").Do(ctx).Error(); err != nil {
		return err
	}
	// Two more writes, so the informer's resourceVersion is at least two
	// revisions behind: after a compaction, that is what makes it too old.
	for i := 1; i <= 2; i++ {
		if err := patch(ctx, client, ns, "demo", fmt.Sprintf("during-outage-%d", i)); err != nil {
			return err
		}
	}
	if c.etcd != "" {
		rev, err := testenv.CompactEtcd(ctx, c.etcd)
		if err != nil {
			return err
		}
		rec.say("          >> etcd: compacted to revision %d; history before it is gone", rev)
	}
	// The outage ends c.outage after it began, but not before the writes
	// (and the compaction) are done: a re-watch that got through before
	// them would see them as events, and the 410 this step shows would
	// not come.
	proxy.Refuse(max(c.outage-time.Since(down), 0))
	if _, err := rec.waitFor(ctx, m, c.outage+30*time.Second, func(e informer.TraceEvent) bool {
		return e.Stage == informer.StageListener && e.Kind == sharedinformer.KindDelivered &&
			rec.short(e.Key) == "doomed" && strings.HasPrefix(e.Detail, "delete") && strings.Contains(e.Detail, "to narrate")
	}); err != nil {
		return err
	}
	if err := waitIdle(ctx, rec, c.work); err != nil {
		return err
	}
	relist, relisted := rec.find(m, rec.is(informer.StageReflector, reflector.KindRelist, ""))
	_, unknown := rec.find(m, func(e informer.TraceEvent) bool {
		return e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindQueued && rec.short(e.Key) == "doomed" &&
			strings.Contains(e.Detail, "final state unknown")
	})
	switch {
	case relisted && unknown:
		rec.say("   Verdict: the re-watch failed: %s. So the reflector listed again.", relist.Detail)
		rec.say("   \"doomed\" was missing from the new list, so the DeltaFIFO queued a delete whose final state is unknown,")
		rec.say("   and every handler got OnDelete(lastKnown, finalStateUnknown=true). A controller must not")
		rec.say("   rely on seeing every event: it must reconcile the state it finds (level-triggered).")
	case relisted:
		rec.say("   Verdict: the reflector relisted (%s), and the delete still arrived with its final state.", relist.Detail)
	default:
		rec.say("   Verdict: no 410 came. The server still had the history, so the reflector re-watched from its")
		rec.say("   last resourceVersion, without a relist, and the delete arrived as an ordinary DELETED event.")
		rec.say("   To see a relist, run the local control plane with --watch-cache=false and pass --etcd.")
	}
	return nil
}

// waitDone waits until the worker has finished a reconcile of name that
// started after position from.
func waitDone(ctx context.Context, rec *recorder, from int, name string) error {
	_, err := rec.waitFor(ctx, from, 30*time.Second, rec.is(informer.StageWorkqueue, workqueue.KindDone, name))
	return err
}

// waitIdle waits until nothing has been traced for a while: the dust settled.
func waitIdle(ctx context.Context, rec *recorder, work time.Duration) error {
	quiet := work + 300*time.Millisecond
	for n := rec.mark(); ; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(quiet):
		}
		if m := rec.mark(); m != n {
			n = m
			continue
		}
		return nil
	}
}

func create(ctx context.Context, client *rest.RESTClient, ns, name string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "tour"}},
		Data:       map[string]string{"step": "created"},
	}
	err := client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	return nil
}

func patch(ctx context.Context, client *rest.RESTClient, ns, name, step string) error {
	body := fmt.Sprintf(`{"data":{"step":%q}}`, step)
	err := client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(name).
		Body([]byte(body)).Do(ctx).Error()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("updating %s: %w", name, err)
	}
	return err
}
