package replicas

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// writers change the parents straight at the API server, as the admin:
// updates of data.tick at a steady rate, and parents created and deleted
// while the faults run. They keep the set of parents that must exist.
type writers struct {
	core *rest.RESTClient
	ns   string

	mu      sync.Mutex
	parents map[string]bool // guarded by mu; name → exists, as the writers' own successful requests say
	unsure  map[string]bool // guarded by mu; a create or delete whose outcome is unknown (the request failed)
	next    int             // guarded by mu; the next parent's number: names are never reused
	created int             // guarded by mu; parents created during the run
	deleted int             // guarded by mu
}

// parentName is the name of parent i.
func parentName(i int) string { return fmt.Sprintf("p-%04d", i) }

func newWriters(core *rest.RESTClient, ns string) *writers {
	return &writers{core: core, ns: ns, parents: map[string]bool{}, unsure: map[string]bool{}}
}

// create creates the next parent.
func (w *writers) create(ctx context.Context) error {
	w.mu.Lock()
	name := parentName(w.next)
	w.next++
	w.mu.Unlock()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: map[string]string{"app": "chaos-replicas"}},
		Data: map[string]string{"tick": "0"}}
	err := w.core.Post().Namespace(w.ns).Resource("configmaps").Body(cm).Do(ctx).Error()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.unsure[name] = true
		return err
	}
	w.parents[name] = true
	return nil
}

// deleteOne deletes a random parent.
func (w *writers) deleteOne(ctx context.Context, rng *rand.Rand) error {
	name := w.random(rng)
	if name == "" {
		return nil
	}
	err := w.core.Delete().Namespace(w.ns).Resource("configmaps").Name(name).Do(ctx).Error()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && !apierrors.IsNotFound(err) {
		w.unsure[name] = true
		return err
	}
	delete(w.parents, name)
	w.deleted++
	return nil
}

// random returns a random existing parent, or "".
func (w *writers) random(rng *rand.Rand) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.parents))
	for name := range w.parents {
		names = append(names, name)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[rng.IntN(len(names))]
}

// updates changes data.tick of a random parent rate times a second
// until ctx ends: the load that keeps every ring reconciling.
func (w *writers) updates(ctx context.Context, rng *rand.Rand, rate float64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if name := w.random(rng); name != "" {
			body := fmt.Appendf(nil, `{"data":{"tick":"%d"}}`, i)
			w.core.Patch(types.MergePatchType).Namespace(w.ns).Resource("configmaps").Name(name).Body(body).Do(ctx)
		}
	}
}

// churn creates a parent and deletes another, alternately, every period,
// until ctx ends.
func (w *writers) churn(ctx context.Context, rng *rand.Rand, period time.Duration) {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		if i%2 == 0 {
			if w.create(ctx) == nil {
				w.mu.Lock()
				w.created++
				w.mu.Unlock()
			}
		} else {
			w.deleteOne(ctx, rng)
		}
	}
}

// expected returns the parents that must exist, and those whose fate a
// failed request left unknown.
func (w *writers) expected() (must map[string]bool, unsure map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	must, unsure = map[string]bool{}, map[string]bool{}
	for name := range w.parents {
		if !w.unsure[name] {
			must[name] = true
		}
	}
	for name := range w.unsure {
		unsure[name] = true
	}
	return must, unsure
}
