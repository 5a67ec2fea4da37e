package replicas

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objectCount is check (c): no object lost, none created twice.
type objectCount struct {
	parents, children int      // as listed at the end
	lost              []string // parents the writers created and did not delete, missing; children missing under a live parent
	extra             []string // parents that exist though the writers deleted them or never created them
	twice             []string // children a replica reported creating more than once
}

// countObjects lists the objects and compares them with what the
// writers did and the replicas reported creating.
func (r *run) countObjects(ctx context.Context, events []event) (objectCount, error) {
	var out objectCount
	cms := &corev1.ConfigMapList{}
	if err := r.core.Get().Namespace(r.ns).Resource("configmaps").Param("labelSelector", appLabel).Do(ctx).Into(cms); err != nil {
		return out, err
	}
	exists := map[string]bool{}
	for i := range cms.Items {
		cm := &cms.Items[i]
		exists[cm.Name] = true
		if metav1.GetControllerOf(cm) == nil {
			out.parents++
		} else {
			out.children++
		}
	}
	must, unsure := r.writers.expected()
	for name := range must {
		if !exists[name] {
			out.lost = append(out.lost, name)
			continue
		}
		for _, ring := range rings {
			if !exists[childName(name, ring)] {
				out.lost = append(out.lost, childName(name, ring))
			}
		}
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if metav1.GetControllerOf(cm) == nil && !must[cm.Name] && !unsure[cm.Name] {
			out.extra = append(out.extra, cm.Name)
		}
	}
	created := map[string]int{}
	for _, ev := range events {
		if ev.kind == "C" && len(ev.fields) == 5 && ev.fields[4] == "ok" {
			created[ev.fields[3]]++
		}
	}
	for name, n := range created {
		if n > 1 {
			out.twice = append(out.twice, fmt.Sprintf("%s (%d times)", name, n))
		}
	}
	slices.Sort(out.lost)
	slices.Sort(out.extra)
	slices.Sort(out.twice)
	return out, nil
}
