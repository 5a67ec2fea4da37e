package simulation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Parents is how many parent ConfigMaps the writers keep (at most).
const Parents = 8

// parentName is parent i's name.
func parentName(i int) string { return fmt.Sprintf("p-%02d", i) }

// write is the writers' work until ctx ends: as the admin, every 500 ms
// one change to a parent: mostly a new tick (an update), sometimes a
// delete (with its children, there being no garbage collector, but one
// time in two, in the leader-elected scenario, the built-in controller's
// are left for it to delete: in the sharded one sharding.Reconciler runs
// no reconcile for a parent gone, and nothing would) or a create of a
// missing one. In a grouped seed, each tick also brings a change of
// owners (regroup), and a deleted parent's children are, one time in
// two, deleted a moment after it (groups.go).
func (w *world) write(ctx context.Context) {
	rng := rand.New(rand.NewPCG(uint64(w.opts.Seed), 0x3717e5))
	leave := rand.New(rand.NewPCG(uint64(w.opts.Seed), 0x1eaf)) // its own: rng's draws stay where they were
	regroups := rand.New(rand.NewPCG(uint64(w.opts.Seed), 0x6a0c))
	flips := rand.New(rand.NewPCG(uint64(w.opts.Seed), 0xf11b)) // a grouped seed's moments: flipBack, late children
	tick := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		tick++
		name := parentName(rng.IntN(Parents))
		switch p := rng.IntN(10); {
		case p < 7:
			patch := fmt.Appendf(nil, `{"data":{"tick":%q}}`, strconv.Itoa(tick))
			_ = w.core.Patch(types.MergePatchType).Namespace(Namespace).Resource("configmaps").Name(name).Body(patch).Do(ctx).Error()
		case p < 8:
			_ = w.core.Delete().Namespace(Namespace).Resource("configmaps").Name(name).Do(ctx).Error()
			if w.opts.Scenario == LeaderElected && w.opts.Controller == nil && leave.IntN(2) == 0 {
				break // the children are the terms' controllers' to delete (removeChild)
			}
			if w.grouped && flips.IntN(2) == 0 {
				w.later(ctx, time.Duration(100+flips.IntN(500))*time.Millisecond, func() { w.collectOrphansOf(ctx, name) })
				break
			}
			for _, ring := range w.opts.Scenario.rings() {
				_ = w.core.Delete().Namespace(Namespace).Resource("configmaps").Name(ChildName(name, ring)).Do(ctx).Error()
			}
		default:
			_ = w.createParent(ctx, name, tick)
		}
		if w.grouped {
			w.regroup(ctx, regroups, flips)
		}
	}
}

// createParent creates parent name at tick, with Options.Label.
func (w *world) createParent(ctx context.Context, name string, tick int) error {
	key, value, _ := splitLabel(w.opts.Label) // Run validated it
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name, Labels: map[string]string{key: value}},
		Data: map[string]string{"tick": strconv.Itoa(tick)}}
	return w.core.Post().Namespace(Namespace).Resource("configmaps").Body(cm).Do(ctx).Error()
}
