package simulation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Grouped seeds. In one sharded seed in two (the built-in controller's),
// the writers also move objects between owners, where the sharding
// bugs of the acknowledgement path lived:
//
//   - a parent is grouped under an owner that is not sharded (one of
//     Groups, Secrets the world makes at the start: ConfigMaps
//     controlled by an unsharded Deployment, in a real cluster), moved
//     to another group, or ungrouped. A grouped parent sits on the ring
//     at its group's key (sharding.RingKey), so regrouping drains it
//     when that key lands on another member, and its children follow
//     it, with no member joining or leaving;
//   - a child is orphaned (its owner references removed): it sits on
//     the ring at its own key, so it is drained from its parent's
//     member when that key lands elsewhere, and the ring's controller
//     adopts it back (adopt), which drains it again, to follow its
//     parent;
//   - a child is given to a parent, its own or another, whatever its
//     labels say: a drained child adopted before its drain is
//     acknowledged, as another controller may;
//   - a regrouped parent is, one time in two, put back under the owner
//     it had 50 to 400 ms later (flipBack), so the sharder takes its
//     drain back while its member may be letting it or its children
//     go: a parent that comes back, kept, in the middle of a member's
//     call;
//   - a regrouped parent is, one time in four, deleted 50 to 400 ms
//     later, while its drain (and its children's) may be under way;
//   - a deleted parent's children are, one time in two (and always
//     after the delete above), deleted 100 to 600 ms after it
//     (collectOrphansOf), as the garbage collector does behind its
//     watch, not at once: a drained child whose parent is found
//     deleted.
//
// The members key every object by its ring key (as in every sharded
// seed), so a grouped parent's own events bring its group's key, which
// sharding.Reconciler never reconciles (no object of that name is in
// the cache) but under which it lets the group's drained parents go;
// its children's events bring the parent's own key, which it does
// reconcile. So converged asks of a grouped parent only that it and its
// children sit where the ring says; the rest as of any parent.

// Groups are the unsharded owners a grouped seed's parents are grouped
// under.
var Groups = []string{"g-0", "g-1", "g-2"}

// groupedSeed reports whether the seed's world is grouped: one sharded
// seed in two of the built-in controller, drawn from a stream of its
// own so every other draw stays where it was.
func groupedSeed(opts Options) bool {
	return opts.Scenario == Sharded && opts.Controller == nil &&
		rand.New(rand.NewPCG(uint64(opts.Seed), 0x6a0b)).IntN(2) == 0
}

// makeGroups creates Groups, as the admin, and records their UIDs.
func (w *world) makeGroups(ctx context.Context) error {
	w.groups = map[string]types.UID{}
	for _, name := range Groups {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
		if err := w.core.Post().Namespace(Namespace).Resource("secrets").Body(s).Do(ctx).Into(s); err != nil {
			return fmt.Errorf("simulation: group %s: %w", name, err)
		}
		w.groups[name] = s.UID
	}
	return nil
}

// Family is how many parents, the first, the writers' changes of
// owners pick from: the bugs live where a parent's and its children's
// changes meet, so they meet more often in a small family.
const Family = 3

// regroup is a grouped seed's writers' extra change, drawn from their
// own stream rng, among the Family's parents and their children: a
// parent grouped under a group (another, if it has one; drawn from
// flips, one time in two put back a moment later, flipBack, one time in
// four deleted a moment later), a parent
// ungrouped, a child orphaned (and, one time in two, 100 to 400 ms
// later, given to a parent, often while the sharder drains it as an
// orphan), or a child given to a parent, its own or another (an orphan
// adopted, as another controller than the ring's may, at any moment,
// drained or not).
func (w *world) regroup(ctx context.Context, rng, flips *rand.Rand) {
	parent := parentName(rng.IntN(Family))
	child := ChildName(parent, Rings[rng.IntN(len(Rings))])
	switch p := rng.IntN(20); {
	case p < 8:
		group := Groups[rng.IntN(len(Groups))]
		switch after := time.Duration(50+flips.IntN(350)) * time.Millisecond; flips.IntN(4) {
		case 0, 1:
			w.flipBack(ctx, parent, after)
		case 2:
			gc := time.Duration(100+flips.IntN(500)) * time.Millisecond
			w.later(ctx, after, func() { w.deleteParent(ctx, parent, gc) })
		}
		w.setOwner(ctx, parent, "Secret", group, w.groups[group])
	case p < 11:
		w.setOwner(ctx, parent, "", "", "")
	case p < 15:
		w.setOwner(ctx, child, "", "", "")
		if rng.IntN(2) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(100+rng.IntN(300)) * time.Millisecond):
		}
		fallthrough
	default:
		adopter := &corev1.ConfigMap{}
		if err := w.core.Get().Namespace(Namespace).Resource("configmaps").Name(parentName(rng.IntN(Family))).Do(ctx).Into(adopter); err == nil {
			w.setOwner(ctx, child, "ConfigMap", adopter.Name, adopter.UID)
		}
	}
}

// flipBack reads parent's controller owner now and, after, in a
// goroutine of its own (the writers' ticks keep their times), puts it
// back unguarded, unless ctx ends first: the writers stop with faults,
// and a write after that would land in the quiet the checks need.
func (w *world) flipBack(ctx context.Context, parent string, after time.Duration) {
	cm := &corev1.ConfigMap{}
	if err := w.core.Get().Namespace(Namespace).Resource("configmaps").Name(parent).Do(ctx).Into(cm); err != nil {
		return
	}
	kind, name, uid := "", "", types.UID("")
	if ref := metav1.GetControllerOfNoCopy(cm); ref != nil {
		kind, name, uid = ref.Kind, ref.Name, ref.UID
	}
	w.later(ctx, after, func() { w.setOwner(ctx, parent, kind, name, uid) })
}

// deleteParent deletes parent, and its children gc later
// (collectOrphansOf), unless ctx ends first.
func (w *world) deleteParent(ctx context.Context, parent string, gc time.Duration) {
	_ = w.core.Delete().Namespace(Namespace).Resource("configmaps").Name(parent).Do(ctx).Error()
	w.later(ctx, gc, func() { w.collectOrphansOf(ctx, parent) })
}

// later runs f after d in a goroutine of its own, unless ctx ends
// first.
func (w *world) later(ctx context.Context, d time.Duration, f func()) {
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(d):
			f()
		}
	}()
}

// collectOrphansOf deletes, as the garbage collector would behind its
// watch, each of parent's children (by name) whose controller owner no
// longer exists: none of that name, or one of another UID. A child
// adopted meanwhile, or made for a parent created again, stays. The
// delete is guarded by the child's UID.
func (w *world) collectOrphansOf(ctx context.Context, parent string) {
	for _, ring := range w.opts.Scenario.rings() {
		child := &corev1.ConfigMap{}
		if err := w.core.Get().Namespace(Namespace).Resource("configmaps").Name(ChildName(parent, ring)).Do(ctx).Into(child); err != nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(child)
		if ref == nil {
			continue
		}
		owner := &corev1.ConfigMap{}
		err := w.core.Get().Namespace(Namespace).Resource("configmaps").Name(ref.Name).Do(ctx).Into(owner)
		if err == nil && owner.UID == ref.UID || err != nil && !apierrors.IsNotFound(err) {
			continue
		}
		_ = w.core.Delete().Namespace(Namespace).Resource("configmaps").Name(child.Name).
			Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &child.UID}}).Do(ctx).Error()
	}
}

// setOwner makes the object name's controller owner the one of kind,
// name and uid (kind "": none), as the admin, unguarded.
func (w *world) setOwner(ctx context.Context, name, kind, owner string, uid types.UID) {
	patch := ownerPatch("", kind, owner, uid)
	_ = w.core.Patch(types.MergePatchType).Namespace(Namespace).Resource("configmaps").Name(name).Body(patch).Do(ctx).Error()
}

// ownerPatch is a merge patch that makes the owner of kind, name and uid
// (a core/v1 kind; "": none) an object's one owner reference, its
// controller, guarded by resourceVersion rv ("": unguarded).
func ownerPatch(rv, kind, name string, uid types.UID) []byte {
	owners := "null"
	if kind != "" {
		owners = fmt.Sprintf(`[{"apiVersion":"v1","kind":%q,"name":%q,"uid":%q,"controller":true}]`, kind, name, uid)
	}
	if rv == "" {
		return fmt.Appendf(nil, `{"metadata":{"ownerReferences":%s}}`, owners)
	}
	return fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"ownerReferences":%s}}`, rv, owners)
}

// childOf parses a child's name: its parent and ring, ok false if name
// is no child's (parentName is "p-" and two digits).
func childOf(name string) (parent, ring string, ok bool) {
	const parentLen = len("p-00")
	if len(name) < parentLen+2 || !strings.HasPrefix(name, "p-") || name[parentLen] != '-' {
		return "", "", false
	}
	parent, ring = name[:parentLen], name[parentLen+1:]
	return parent, ring, slices.Contains(Rings, ring)
}

// isParent reports whether name is a parent's: "p-" and two digits.
func isParent(name string) bool {
	return len(name) == len("p-00") && strings.HasPrefix(name, "p-") &&
		strings.Trim(name[2:], "0123456789") == ""
}

// adopt is the reconcile of an orphaned child's key: the ring's
// controller makes the orphan named as its child of a parent that
// exists that parent's child again, as kube-controller-manager's
// controllers adopt the orphans they select: a controller owner reference to the parent, read
// from the API server (the parent may sit on another member), written
// guarded by the resourceVersion the cache held. A child that is not
// this ring's, or not an orphan, is left; one whose parent is gone is
// looked at again each second, since only the orphan's events bring
// its key, and the writers may make that parent again.
func (c *controller) adopt(ctx context.Context, key informer.Key, parentName, ring string) (workqueue.Result, error) {
	child, err := c.cms.Lister().Namespace(key.Namespace).Get(key.Name)
	c.note(Read, key, key.Name, child)
	if err != nil || ring != c.ring || metav1.GetControllerOfNoCopy(child) != nil {
		return workqueue.Result{}, nil
	}
	c.r.link.gate.wait(context.WithoutCancel(ctx))
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.writeTimeout)
	defer cancel()
	parent := &corev1.ConfigMap{}
	err = c.client.Get().Namespace(key.Namespace).Resource("configmaps").Name(parentName).Do(wctx).Into(parent)
	if err != nil { // a parent gone may be made again, and nothing else brings this key then
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	patch := ownerPatch(child.ResourceVersion, "ConfigMap", parent.Name, parent.UID)
	err = c.write(wctx, key, c.client.Patch(types.MergePatchType).Namespace(key.Namespace).Resource("configmaps").Name(key.Name).Body(patch))
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	return workqueue.Result{}, nil
}

// The cases a grouped seed counts (Result.Coverage): a run whose
// writers' changes of owners drained nothing checked nothing of them.
const (
	// A parent grouped under one of Groups was let go by its member.
	caseGroupedParentLetGo = "a grouped parent let go by its member (grouped seeds)"
	// An orphan was let go by its member.
	caseOrphanLetGo = "an orphan let go by its member (grouped seeds)"
	// A ring's controller adopted an orphan (adopt wrote).
	caseAdopted = "an orphan adopted (grouped seeds)"
	// A drain was taken back: the drain label gone, the shard label
	// still naming the same member.
	caseDrainTakenBack = "a drain taken back (grouped seeds)"
	// A parent was deleted while a child of its sat drained.
	caseParentGoneChildDrained = "a parent deleted while its child drained (grouped seeds)"
	// A drain gone stale (the object adopted or orphaned since) was
	// written anew for the controller it has now: the drain label
	// changed from one value to another (sharding's drainvalue.go).
	caseDrainRenewed = "a stale drain written anew (grouped seeds)"
)

// reachLetGo counts a grouped seed's case of cm, whose shard label a
// member has just removed (it let cm go).
func (w *world) reachLetGo(cm *corev1.ConfigMap) {
	ref := metav1.GetControllerOfNoCopy(cm)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch _, _, child := childOf(cm.Name); {
	case isParent(cm.Name) && ref != nil && ref.Kind == "Secret":
		w.groupedReached[caseGroupedParentLetGo]++
	case child && ref == nil:
		w.groupedReached[caseOrphanLetGo]++
	}
}

// reachChange counts a grouped seed's cases of a ring's labels changing
// on an object from old to cm (their shard and drain labels).
func (w *world) reachChange(old, cm *corev1.ConfigMap, label, drain string) {
	if !w.grouped || old.Labels[drain] == "" || old.Labels[label] != cm.Labels[label] || cm.Labels[label] == "" {
		return
	}
	switch was, now := old.Labels[drain], cm.Labels[drain]; {
	case now == "":
		w.mu.Lock()
		w.groupedReached[caseDrainTakenBack]++
		w.mu.Unlock()
	case now != was:
		w.mu.Lock()
		w.groupedReached[caseDrainRenewed]++
		w.mu.Unlock()
	}
}

// reachDeleted counts a grouped seed's case of a parent deleted while a
// child of its, among the objects last seen, sat drained in some ring.
func (w *world) reachDeleted(last map[string]*corev1.ConfigMap, deleted *corev1.ConfigMap) {
	if !w.grouped || !isParent(deleted.Name) {
		return
	}
	for _, cm := range last {
		ref := metav1.GetControllerOfNoCopy(cm)
		if ref == nil || ref.UID != deleted.UID {
			continue
		}
		for _, ring := range w.opts.Scenario.rings() {
			if cm.Labels[sharding.Shard{Ring: ring}.DrainLabel()] != "" {
				w.mu.Lock()
				w.groupedReached[caseParentGoneChildDrained]++
				w.mu.Unlock()
				return
			}
		}
	}
}

// groupedCoverage is a grouped seed's cases, 0 included, with the
// adoptions the history records; nil for a seed not grouped.
func (w *world) groupedCoverage(events []Event) map[string]int {
	if !w.grouped {
		return nil
	}
	w.mu.Lock()
	out := map[string]int{}
	for _, c := range []string{caseGroupedParentLetGo, caseOrphanLetGo, caseDrainTakenBack, caseParentGoneChildDrained, caseDrainRenewed} {
		out[c] = w.groupedReached[c]
	}
	w.mu.Unlock()
	for _, e := range events {
		if _, _, child := childOf(e.Object); e.What == Wrote && child && e.Key == Namespace+"/"+e.Object {
			out[caseAdopted]++
		}
	}
	out[caseAdopted] += 0
	return out
}
