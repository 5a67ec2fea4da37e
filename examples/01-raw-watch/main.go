// Command 01-raw-watch lists and watches ConfigMaps with nothing but
// client-go's rest package, so you can see what the API gives you and what
// it leaves to you: remembering resourceVersions, reconnecting when a watch
// ends, and starting over when the server says 410 Gone. Doing all of that
// right, for every collection, is why informers exist.
//
//	go run ./01-raw-watch --namespace tour --duration 30s
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/examples/internal/cli"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := cli.NewFlagSet("01-raw-watch", "list and watch ConfigMaps with nothing but LIST and WATCH, and see what an informer must handle", out)
	conn := cli.Register(fs, "listwatch-tour")
	duration := fs.Duration("duration", 30*time.Second, "how long to keep watching before the 410 demonstration (at least until the writer's changes are made)")
	watchTimeout := fs.Duration("watch-timeout", 5*time.Second, "timeoutSeconds asked of each WATCH: the server ends the watch then")
	changes := fs.Int("changes", 4, "how many changes this example makes to a ConfigMap while you watch")
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
	ns := conn.Namespace
	if err := cli.EnsureNamespace(ctx, client, ns); err != nil {
		return err
	}

	// Step 1: LIST. A watch only tells you about changes, so you first need
	// the current state, and the resourceVersion it was read at.
	var list corev1.ConfigMapList
	if err := client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(&list); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	rv := list.ResourceVersion
	fmt.Fprintf(out, "LIST   %d configmaps in %s at resourceVersion %s\n", len(list.Items), ns, rv)
	fmt.Fprintln(out, "       You keep that resourceVersion: it is where your WATCH must start, so that")
	fmt.Fprintln(out, "       nothing that happens between the LIST and the WATCH is lost.")

	// Something to watch: a writer that changes one ConfigMap now and then.
	// (Run `kubectl -n <ns> edit configmap` meanwhile to add your own.)
	writerCtx, stopWriter := context.WithCancel(ctx)
	defer stopWriter()
	written := make(chan struct{}) // closed once the writer's changes are made
	go func() {
		defer close(written)
		writeChanges(writerCtx, client, ns, *changes, *watchTimeout/2)
	}()

	// Step 2: WATCH from that resourceVersion, and again each time it
	// ends, for the duration, and until one watch began after the writer
	// was done (on a slow server its changes take longer than planned):
	// from where the last watch left off, that one sees every change.
	deadline := time.Now().Add(*duration)
	watches, sawAll := 0, false
	for (time.Now().Before(deadline) || !sawAll) && ctx.Err() == nil {
		writerDone := isClosed(written)
		watches++
		fmt.Fprintf(out, "WATCH  #%d from resourceVersion %s (the server will end it after %v)\n", watches, rv, *watchTimeout)
		next, err := watchOnce(ctx, client, ns, rv, *watchTimeout, out)
		if err != nil {
			return err
		}
		rv, sawAll = next, writerDone
		fmt.Fprintf(out, "END    watch #%d ended. You reconnect from resourceVersion %s, the last one you saw.\n", watches, rv)
		if watches == 1 {
			fmt.Fprintln(out, "       From the LIST's resourceVersion you would get old events again; from \"\" (now)")
			fmt.Fprintln(out, "       you would miss what happened while you were reconnecting.")
		}
	}
	stopWriter()
	if ctx.Err() != nil {
		return nil // Ctrl-C: a fine way to stop
	}

	// Step 3: what if you were away too long? The server keeps only a
	// window of history (etcd compacts it; the watch cache holds a few
	// minutes). A WATCH from before that window is answered 410 Gone, and
	// then the only way back is a fresh LIST, and working out yourself which
	// objects vanished meanwhile: their DELETED events are gone for good.
	fmt.Fprintln(out, "\nWATCH  from resourceVersion 1, far in the past, as a client back from a long outage would")
	gone, err := watchTooOld(ctx, client, ns)
	if err != nil {
		return err
	}
	if gone {
		fmt.Fprintln(out, "410    Gone: the server no longer has that history. You must LIST again and diff")
		fmt.Fprintln(out, "       the new list against what you held to find the deletions you missed.")
	} else {
		fmt.Fprintln(out, "OK     this server still had that history, so no 410 came this time; a busy")
		fmt.Fprintln(out, "       cluster compacts within minutes, and then it would.")
	}
	fmt.Fprintln(out, "\nThat is the bookkeeping an informer's reflector does for you, for every collection,")
	fmt.Fprintln(out, "with backoff on errors and a cache you can read. Next: go run ./02-event-trace")
	return nil
}

// watchOnce runs one WATCH until the server ends it (timeout) or ctx ends,
// printing each event. It returns the resourceVersion to resume from.
func watchOnce(ctx context.Context, client *rest.RESTClient, ns, rv string, timeout time.Duration, out io.Writer) (string, error) {
	secs := int64(timeout / time.Second)
	w, err := client.Get().Namespace(ns).Resource("configmaps").
		VersionedParams(&metav1.ListOptions{
			Watch:               true,
			ResourceVersion:     rv,
			TimeoutSeconds:      &secs,
			AllowWatchBookmarks: true, // the server may tell you its RV moved on with no change for you
		}, metav1.ParameterCodec).
		Watch(ctx)
	if err != nil {
		return rv, fmt.Errorf("watch: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		// An ERROR event carries a Status, not a ConfigMap: check the type
		// before you assert.
		if ev.Type == watch.Error {
			return rv, fmt.Errorf("watch error: %v", apierrors.FromObject(ev.Object))
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		rv = cm.ResourceVersion // every event moves your bookmark forward
		if ev.Type == watch.Bookmark {
			fmt.Fprintf(out, "  %-8s rv=%s (no object changed; you just learn the new resourceVersion)\n", ev.Type, rv)
			continue
		}
		fmt.Fprintf(out, "  %-8s %-12s rv=%-6s data=%v\n", ev.Type, cm.Name, rv, cm.Data)
	}
	return rv, nil
}

// watchTooOld watches from resourceVersion 1 and reports whether the server
// answered 410 Gone, either as the HTTP status or as an ERROR event.
func watchTooOld(ctx context.Context, client *rest.RESTClient, ns string) (bool, error) {
	secs := int64(1)
	w, err := client.Get().Namespace(ns).Resource("configmaps").
		VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: "1", TimeoutSeconds: &secs},
			metav1.ParameterCodec).Watch(ctx)
	if err != nil {
		if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
			return true, nil
		}
		return false, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			status, ok := ev.Object.(*metav1.Status)
			if ok && status.Code == http.StatusGone {
				return true, nil
			}
			return false, fmt.Errorf("watch error: %v", apierrors.FromObject(ev.Object))
		}
	}
	return false, nil
}

// writeChanges creates a ConfigMap, updates it, and deletes it, spread over
// time so that the changes land in different watches.
func writeChanges(ctx context.Context, client *rest.RESTClient, ns string, n int, every time.Duration) {
	name := "raw-watch-demo"
	_ = client.Delete().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Error()
	for i := range n {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		var err error
		switch {
		case i == 0:
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"step": "0"}}
			err = client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error()
		case i == n-1:
			err = client.Delete().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Error()
		default:
			patch := fmt.Sprintf(`{"data":{"step":"%d"}}`, i)
			err = client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").
				Name(name).Body([]byte(patch)).Do(ctx).Error()
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "writer:", err)
		}
	}
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
