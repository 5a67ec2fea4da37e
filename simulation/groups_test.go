package simulation

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// Names tell parents from children, and a child's parent and ring.
func TestChildNamesTellTheirParentAndRing(t *testing.T) {
	for _, tc := range []struct {
		name, parent, ring string
		child, isParent    bool
	}{
		{"p-04", "", "", false, true},
		{"p-04-web", "p-04", "web", true, false},
		{"p-04-web-api", "p-04", "web-api", true, false},
		{"p-04-leader", "", "", false, false}, // not a sharded ring's
		{"p-4", "", "", false, false},
		{"g-0", "", "", false, false},
		{"p-0x", "", "", false, false},
	} {
		parent, ring, child := childOf(tc.name)
		if child != tc.child || (child && (parent != tc.parent || ring != tc.ring)) || isParent(tc.name) != tc.isParent {
			t.Errorf("%s: childOf %q %q %v, isParent %v; want %q %q %v, %v",
				tc.name, parent, ring, child, isParent(tc.name), tc.parent, tc.ring, tc.child, tc.isParent)
		}
	}
}

// A child sits on the ring where its parent does: at its parent's
// group's key when the parent is grouped, not at the parent's name; an
// owner reference whose UID no object has places the object by its own
// ring key.
func TestAChildIsPlacedByItsGroupedParentsRingKey(t *testing.T) {
	obj := func(name, uid string, owner *unstructured.Unstructured, ownerUID string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace(Namespace)
		u.SetName(name)
		u.SetUID(types.UID(uid))
		if owner != nil {
			yes := true
			u.SetOwnerReferences([]metav1.OwnerReference{{Kind: owner.GetKind(), Name: owner.GetName(), UID: types.UID(ownerUID), Controller: &yes}})
		}
		return u
	}
	group := &unstructured.Unstructured{}
	group.SetKind("Secret")
	group.SetName("g-1")
	parent := obj("p-00", "uid-p", group, "uid-g")
	parent.SetKind("ConfigMap")
	child := obj("p-00-web", "uid-c", parent, "uid-p")
	stale := obj("p-01-web", "uid-s", parent, "uid-gone") // its parent's name, not its UID
	objs := map[string]*unstructured.Unstructured{"p-00": parent, "p-00-web": child, "p-01-web": stale}

	if got := sharding.RingKey(placedBy(objs, child)); got != Namespace+"/g-1" {
		t.Errorf("the child of a parent grouped under g-1 is placed at %s, want %s/g-1", got, Namespace)
	}
	if got := sharding.RingKey(placedBy(objs, stale)); got != Namespace+"/p-00" {
		t.Errorf("a child whose owner's UID no object has is placed at %s, want its own ring key %s/p-00", got, Namespace)
	}
}

// At the end of a grouped seed, an orphan whose parent exists breaks
// "converged" (the ring's controller adopts it); a grouped parent that
// was not reconciled at its tick does not (only its children's events
// bring its key).
func TestAnOrphanWhoseParentExistsBreaksConverged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		w, err := newWorld(Options{Scenario: Sharded}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		if err := w.makeGroups(ctx); err != nil {
			t.Fatal(err)
		}
		terms := map[string]*openTerm{}
		for _, ring := range Rings {
			terms[ring] = &openTerm{member: "m-" + ring, selector: labels.Everything()}
		}
		w.replicas[0] = &replica{name: "r0-0", terms: terms, sharders: map[string]*metrics.Memory{}}
		write := func(cm *corev1.ConfigMap) {
			t.Helper()
			cm.Namespace, cm.Labels, cm.Annotations = Namespace, map[string]string{"app": "sim"}, map[string]string{}
			cm.Data = map[string]string{"tick": "0"}
			for _, ring := range Rings {
				cm.Labels[sharding.Shard{Ring: ring}.Label()] = "m-" + ring
				cm.Annotations[ReconciledBy(ring)] = "m-" + ring + "/0"
			}
			if err := w.core.Post().Namespace(Namespace).Resource("configmaps").Body(cm).Do(ctx).Into(cm); err != nil {
				t.Fatal(err)
			}
		}
		yes := true
		grouped := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: parentName(0), OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Secret", Name: Groups[0], UID: w.groups[Groups[0]], Controller: &yes}}}}
		plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: parentName(1)}}
		write(grouped)
		write(plain)
		grouped.Annotations[ReconciledBy(Rings[0])] = "m-web/an older tick"
		if err := w.core.Put().Namespace(Namespace).Resource("configmaps").Name(grouped.Name).Body(grouped).Do(ctx).Into(grouped); err != nil {
			t.Fatal(err)
		}
		for _, parent := range []*corev1.ConfigMap{grouped, plain} {
			for _, ring := range Rings {
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ChildName(parent.Name, ring), OwnerReferences: []metav1.OwnerReference{
					{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID, Controller: &yes}}}}
				write(child)
			}
		}
		if got := w.converged(); len(got) != 0 {
			t.Fatalf("a grouped parent reconciled at an older tick, every child owned: %v, want converged", got)
		}

		orphan := ChildName(plain.Name, Rings[1])
		patch := []byte(`{"metadata":{"ownerReferences":null}}`)
		if err := w.core.Patch(types.MergePatchType).Namespace(Namespace).Resource("configmaps").Name(orphan).Body(patch).Do(ctx).Error(); err != nil {
			t.Fatal(err)
		}
		got := w.converged()
		if v := violations(got); v["converged"] != 1 || len(v) != 1 {
			t.Fatalf("orphan %s of existing parent %s: violations %v, want one of converged", orphan, plain.Name, got)
		}
		if want := fmt.Sprintf("orphan %s was not adopted by its parent %s", orphan, plain.Name); got[0].Text != want {
			t.Errorf("converged says %q, want %q", got[0].Text, want)
		}
	})
}

// The checker's watch records for "children follow parents" a child
// let go while its parent is still labelled for that member, and a
// child assigned away from its parent's member, with the parent's label
// of that moment; not a child assigned once its parent was let go.
func TestTheCheckersWatchRecordsAChildThatLeavesOrArrivesWithoutItsParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		w, err := newWorld(Options{Scenario: Sharded}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		label := sharding.Shard{Ring: Rings[0]}.Label()
		create := func(cm *corev1.ConfigMap) {
			t.Helper()
			cm.Namespace, cm.Labels = Namespace, map[string]string{"app": "sim", label: "m-a"}
			if err := w.core.Post().Namespace(Namespace).Resource("configmaps").Body(cm).Do(ctx).Into(cm); err != nil {
				t.Fatal(err)
			}
		}
		relabel := func(name, member string) {
			t.Helper()
			value := "null"
			if member != "" {
				value = fmt.Sprintf("%q", member)
			}
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}}}`, label, value)
			if err := w.core.Patch(types.MergePatchType).Namespace(Namespace).Resource("configmaps").Name(name).Body(patch).Do(ctx).Error(); err != nil {
				t.Fatal(err)
			}
		}
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: parentName(0)}}
		create(parent)
		yes := true
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ChildName(parent.Name, Rings[0]), OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID, Controller: &yes}}}}
		create(child)
		moves := w.watchLabels(ctx)

		relabel(child.Name, "")    // let go before its parent: recorded
		relabel(child.Name, "m-b") // assigned away from its parent on m-a: recorded
		relabel(child.Name, "")    // let go by m-b, its parent on m-a: not the let-go judged
		relabel(parent.Name, "")   // the parent let go
		relabel(child.Name, "m-b") // assigned after its parent was let go: not recorded
		synctest.Wait()

		var got []string
		for _, m := range moves() {
			if m.parentOn != "" {
				got = append(got, fmt.Sprintf("%s→%s parent on %s", m.from, m.to, m.parentOn))
			}
		}
		want := []string{"m-a→ parent on m-a", "→m-b parent on m-a"}
		if !slices.Equal(got, want) {
			t.Fatalf("recorded %q, want %q", got, want)
		}
	})
}

// A grouped seed counts a drain taken back (the drain label gone, the
// object still on its member) and a stale drain written anew (the drain
// label's value changed: sharding names the controller a drain is for,
// and drains an object adopted or orphaned since again); a label's
// other changes are neither.
func TestAGroupedSeedCountsADrainTakenBackAndAStaleDrainWrittenAnew(t *testing.T) {
	w := &world{grouped: true, groupedReached: map[string]int{}}
	label, drain := webLabel, sharding.Shard{Ring: "web"}.DrainLabel()
	at := func(member, drained string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-00-web", Labels: map[string]string{}}}
		if member != "" {
			cm.Labels[label] = member
		}
		if drained != "" {
			cm.Labels[drain] = drained
		}
		return cm
	}
	w.reachChange(at("m-a", "orphan"), at("m-a", "uid-p"), label, drain) // written anew
	w.reachChange(at("m-a", "uid-p"), at("m-a", ""), label, drain)       // taken back
	w.reachChange(at("m-a", "uid-p"), at("", ""), label, drain)          // acknowledged: neither
	w.reachChange(at("m-a", "uid-p"), at("m-a", "uid-p"), label, drain)  // another change: neither
	w.reachChange(at("m-a", ""), at("m-a", "uid-p"), label, drain)       // drained: neither
	if got := w.groupedReached; got[caseDrainRenewed] != 1 || got[caseDrainTakenBack] != 1 || len(got) != 2 {
		t.Errorf("counted %v, want one of %q and one of %q", got, caseDrainRenewed, caseDrainTakenBack)
	}
}
