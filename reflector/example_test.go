package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// printer is a Store that prints each call it receives.
type printer struct{}

func (printer) Add(cm *corev1.ConfigMap) error    { return show("Add", cm) }
func (printer) Update(cm *corev1.ConfigMap) error { return show("Update", cm) }
func (printer) Delete(cm *corev1.ConfigMap) error { return show("Delete", cm) }
func (printer) Resync() error                     { fmt.Println("Resync"); return nil }
func (printer) Bookmark(rv string) error          { fmt.Println("Bookmark at rv", rv); return nil }
func (printer) Replace(cms []*corev1.ConfigMap, rv string) error {
	var names []string
	for _, cm := range cms {
		names = append(names, cm.Name)
	}
	fmt.Printf("Replace %v at rv %s\n", names, rv)
	return nil
}

func show(call string, cm *corev1.ConfigMap) error {
	fmt.Printf("%s %s rv=%s data=%v\n", call, cm.Name, cm.ResourceVersion, cm.Data)
	return nil
}

// discard is a Store that keeps nothing, for examples that print the trace.
type discard struct{}

func (discard) Add(*corev1.ConfigMap) error               { return nil }
func (discard) Update(*corev1.ConfigMap) error            { return nil }
func (discard) Delete(*corev1.ConfigMap) error            { return nil }
func (discard) Replace([]*corev1.ConfigMap, string) error { return nil }
func (discard) Resync() error                             { return nil }
func (discard) Bookmark(string) error                     { return nil }

func configMap(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Data:       map[string]string{"v": value},
	}
}

// start runs r until the returned stop is called; stop returns once Run has.
func start(r *reflector.Reflector[*corev1.ConfigMap]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	return func() { cancel(); <-done }
}

// waitForSync waits until r has seen everything lw holds and is watching.
func waitForSync(r *reflector.Reflector[*corev1.ConfigMap], lw *memlistwatch.ListerWatcher[*corev1.ConfigMap]) {
	for r.LastSyncResourceVersion() != lw.ResourceVersion() || lw.Stats().OpenWatches == 0 {
		time.Sleep(time.Millisecond)
	}
}

// printKinds returns a trace hook that prints the reflector's events of
// the given kinds.
func printKinds(kinds ...string) informer.TraceHook {
	return func(e informer.TraceEvent) {
		if slices.Contains(kinds, e.Kind) {
			fmt.Println(e)
		}
	}
}

// A reflector lists the collection once, hands the whole list to the
// store's Replace, then watches from the list's resourceVersion and turns
// each change into one store call.
func Example() {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = lw.Create(configMap("a", "1"))
	_, _ = lw.Create(configMap("b", "1"))

	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: printer{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop := start(r)
	waitForSync(r, lw)

	_, _ = lw.Update(configMap("a", "2"))
	_ = lw.Delete(informer.Key{Namespace: "default", Name: "b"})
	_, _ = lw.Create(configMap("c", "1"))
	waitForSync(r, lw)
	stop()
	fmt.Println("LastSyncResourceVersion:", r.LastSyncResourceVersion())
	// Output:
	// Replace [a b] at rv 3
	// Update a rv=4 data=map[v:2]
	// Delete b rv=5 data=map[v:1]
	// Add c rv=6 data=map[v:1]
	// LastSyncResourceVersion: 6
}

// While the reflector cannot reach the server, b is deleted and the
// history compacted. Its next watch, from resourceVersion 3, answers 410
// Gone: the changes since 3 are lost. So it relists, consistently, and
// Replace carries the new truth; the DeltaFIFO behind it turns b's absence
// into a delete whose final state is unknown.
func Example_relistAfter410() {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = lw.Create(configMap("a", "1"))
	_, _ = lw.Create(configMap("b", "1"))

	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Store:         discard{},
		// The dropped watch below ends at once with no news: a failure
		// (ShortWatch) that waits the backoff.
		Tuning:  reflector.Tuning{BackoffInitial: time.Millisecond},
		Trace:   printKinds(reflector.KindList, reflector.KindWatch, reflector.KindRelist, reflector.KindReplace),
		OnError: func(error) {}, // the trace shows enough here
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop := start(r)
	waitForSync(r, lw)

	lw.Disconnect() // the watch drops at once, nothing delivered; the next WATCH waits for Reconnect
	_ = lw.Delete(informer.Key{Namespace: "default", Name: "b"})
	_, _ = lw.Create(configMap("c", "1"))
	lw.Compact()
	lw.Reconnect() // the waiting WATCH from rv 3 is answered: 410 Gone
	waitForSync(r, lw)
	stop()
	// Output:
	// reflector  list  rv=3  page 1: 2 objects (asked resourceVersion="", limit=500)
	// reflector  replace  rv=3  2 objects
	// reflector  watch  rv=3
	// reflector  watch  rv=3
	// reflector  relist  resourceVersion 3 is too old (410 Gone)
	// reflector  list  rv=5  page 1: 2 objects (asked resourceVersion="", limit=500)
	// reflector  replace  rv=5  2 objects
	// reflector  watch  rv=5
}

// A bookmark moves LastSyncResourceVersion on with no object changed:
// here the collection's resourceVersion moved because of writes elsewhere
// on the server. A watch restarted later starts from the bookmark, so the
// server has less history to replay and is less likely to answer 410.
func Example_bookmark() {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = lw.Create(configMap("a", "1"))

	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Store:         printer{},
		Trace:         printKinds(reflector.KindWatch, reflector.KindBookmark, reflector.KindResourceVersion),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop := start(r)
	waitForSync(r, lw)

	lw.AdvanceResourceVersion(3) // other collections were written meanwhile
	lw.Bookmark()
	waitForSync(r, lw)
	stop()
	// Output:
	// Replace [a] at rv 2
	// reflector  rv  rv=2  from ""
	// reflector  watch  rv=2
	// reflector  bookmark  rv=5
	// Bookmark at rv 5
	// reflector  rv  rv=5  from 2
}
