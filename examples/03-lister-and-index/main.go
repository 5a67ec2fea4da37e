// Command 03-lister-and-index builds an informer over ConfigMaps in two
// namespaces, then answers questions from its cache instead of the API
// server: by namespace, by label selector, and through a custom index. Then
// it adds a second event handler late, to show that a latecomer is first
// handed everything already cached (OnAdd with isInInitialList=true) before
// it hears about new changes.
//
//	go run ./03-lister-and-index --namespace tour
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// exampleLabel marks every object this example creates. The informer
// watches only objects carrying it: a label-scoped informer, whose cache
// holds just what it needs, in every namespace.
const (
	tourLabel    = "listwatch.example/tour"
	exampleLabel = tourLabel + "=03"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("03-lister-and-index", "answer questions from an informer's cache: by namespace, by label, through an index", out)
	conn := cli.Register(fs, "listwatch-tour")
	perTier := fs.Int("per-tier", 2, "ConfigMaps to create per tier and namespace")
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
	// Two namespaces, so there is something to tell apart.
	namespaces := []string{conn.Namespace, conn.Namespace + "-b"}
	for _, ns := range namespaces {
		if err := cli.EnsureNamespace(ctx, client, ns); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "We create ConfigMaps labelled tier=web and tier=db in %s and %s.\n", namespaces[0], namespaces[1])
	for _, ns := range namespaces {
		for _, tier := range []string{"web", "db"} {
			for i := range *perTier {
				if err := create(ctx, client, ns, fmt.Sprintf("%s-%d", tier, i), tier); err != nil {
					return err
				}
			}
		}
	}
	defer cleanUp(client, namespaces)

	// The informer: every namespace, only our label. We add one custom
	// index, "tier", so that "which objects have tier=db?" is a map lookup,
	// not a scan. (Every informer also keeps the namespace index.)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
		Resource:      corev1.SchemeGroupVersion.WithResource("configmaps"),
		LabelSelector: exampleLabel,
	})
	if err != nil {
		return err
	}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Resource:      corev1.Resource("configmaps"),
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{
			"tier": indexer.LabelIndexFunc[*corev1.ConfigMap]("tier"),
		},
	})
	if err != nil {
		return err
	}
	runCtx, stopInformer := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = inf.Run(runCtx); close(done) }()
	defer func() { stopInformer(); <-done }()

	// Reading an unsynced cache would give you wrong answers, not errors.
	if err := sharedinformer.WaitForCacheSync(ctx, inf); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe cache synced at resourceVersion %s with %d objects. Every question below is\n",
		inf.LastSyncResourceVersion(), inf.Indexer().Len())
	fmt.Fprintln(out, "answered from memory: no request reaches the API server.")

	cms := inf.Lister()
	fmt.Fprintf(out, "\n  lister.Namespace(%q).List(everything)  → %s\n", namespaces[0],
		names(cms.Namespace(namespaces[0]).List(labels.Everything())))
	db := labels.SelectorFromSet(labels.Set{"tier": "db"})
	fmt.Fprintf(out, "  lister.List(tier=db), all namespaces     → %s\n", names(cms.List(db)))
	fmt.Fprintf(out, "  lister.Namespace(%q).List(tier=db)     → %s\n", namespaces[1], names(cms.Namespace(namespaces[1]).List(db)))
	byIndex, err := inf.Indexer().ByIndex("tier", "web")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  indexer.ByIndex(\"tier\", \"web\")           → %s\n", names(byIndex))
	fmt.Fprintln(out, "  (List with a selector tests every object of its scope; ByIndex reads one bucket.)")
	if _, err := cms.Namespace(namespaces[0]).Get("nope"); err != nil {
		fmt.Fprintf(out, "  lister.Namespace(%q).Get(\"nope\")     → %v\n", namespaces[0], err)
	}

	// A handler added late. It does not miss what happened before it came:
	// the informer replays its cache to it as OnAdd(obj, true), then sends
	// it live changes, OnAdd(obj, false), with nothing lost or doubled
	// between the two.
	fmt.Fprintln(out, "\nNow we add a handler to the running informer. It first gets the cache replayed:")
	var mu sync.Mutex
	var lines []string
	live := make(chan struct{}, 1)
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, isInInitialList bool) {
			mu.Lock()
			lines = append(lines, fmt.Sprintf("  late handler: OnAdd(%s/%s, isInInitialList=%v)", cm.Namespace, cm.Name, isInInitialList))
			mu.Unlock()
			if !isInInitialList {
				select {
				case live <- struct{}{}:
				default:
				}
			}
		},
	}, sharedinformer.HandlerOptions{Name: "late"})
	if err != nil {
		return err
	}
	if err := sharedinformer.WaitForCacheSync(ctx, reg); err != nil { // the replay is done
		return err
	}
	printSorted(out, &mu, &lines)

	fmt.Fprintln(out, "\nThen, when you create one more, it hears about it like any handler:")
	if err := create(ctx, client, namespaces[0], "cache-0", "cache"); err != nil {
		return err
	}
	select {
	case <-live:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the late handler never heard of cache-0")
	case <-ctx.Done():
		return ctx.Err()
	}
	printSorted(out, &mu, &lines)
	values, _ := inf.Indexer().IndexValues("tier")
	slices.Sort(values)
	fmt.Fprintf(out, "\nThe tier index now has the values %v.\nNext: go run ./04-controller\n", values)
	return nil
}

// printSorted prints and clears lines, sorted: the replay comes in no
// particular order.
func printSorted(out io.Writer, mu *sync.Mutex, lines *[]string) {
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(*lines)
	for _, l := range *lines {
		fmt.Fprintln(out, l)
	}
	*lines = nil
}

func names(cms []*corev1.ConfigMap) string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

func create(ctx context.Context, client *rest.RESTClient, ns, name, tier string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{tourLabel: "03", "tier": tier},
	}}
	err := client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("creating %s/%s: %w", ns, name, err)
	}
	return nil
}

// cleanUp deletes what this example created, so that it can run again.
func cleanUp(client *rest.RESTClient, namespaces []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ns := range namespaces {
		_ = client.Delete().Namespace(ns).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{LabelSelector: exampleLabel}, metav1.ParameterCodec).
			Do(ctx).Error()
	}
}
