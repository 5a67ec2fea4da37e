package simulation

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// watchedAndChecked runs f in a bubble with a sharded world whose checker's
// watch runs; f gets helpers to create and patch ConfigMaps as the admin
// and to add term events, and returns when done; then the history is
// checked and its violations returned.
func watchedAndChecked(t *testing.T, f func(ctx context.Context, w *world, put func(cm *corev1.ConfigMap) *corev1.ConfigMap, patch func(name, body string)) func() []move) map[string]int {
	var got map[string]int
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(Options{Scenario: Sharded}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		ctx, cancel := context.WithCancel(t.Context())
		put := func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			t.Helper()
			cm.Namespace = Namespace
			out := &corev1.ConfigMap{}
			if err := w.core.Post().Namespace(Namespace).Resource("configmaps").Body(cm).Do(ctx).Into(out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		patch := func(name, body string) {
			t.Helper()
			if err := w.core.Patch(types.MergePatchType).Namespace(Namespace).Resource("configmaps").Name(name).Body([]byte(body)).Do(ctx).Error(); err != nil {
				t.Fatal(err)
			}
		}
		moves := f(ctx, w, put, patch)
		synctest.Wait()
		cancel()
		synctest.Wait()
		got = violations(w.checkHistory(moves()))
	})
	return got
}

var webLabel = sharding.Shard{Ring: "web"}.Label()

// A child moved straight off a member whose term ended (dead for
// certain) to a member other than its parent's, while its parent sits on
// a live member in its term, "reaches a member while its parent is on
// another live one" (docs/18): children follow parents should fail, as
// it does for the same child moved from no label.
func TestAChildMovedOffADeadMemberAwayFromItsParentsLiveMemberBreaksChildrenFollowParents(t *testing.T) {
	for _, from := range []string{"", "m-c"} {
		t.Run("from "+from, func(t *testing.T) {
			got := watchedAndChecked(t, func(ctx context.Context, w *world, put func(*corev1.ConfigMap) *corev1.ConfigMap, patch func(string, string)) func() []move {
				w.hist.add(Event{What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-a", Fence: 1})
				w.hist.add(Event{What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-c", Fence: 2})
				w.hist.add(Event{What: TermStart, Replica: "r2-0", Ring: "web", Member: "m-b", Fence: 3})
				yes := true
				parent := put(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-00", Labels: map[string]string{"app": "sim", webLabel: "m-a"}}})
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-00-web", Labels: map[string]string{"app": "sim"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID, Controller: &yes}}}}
				if from != "" {
					child.Labels[webLabel] = from
				}
				put(child)
				moves := w.watchLabels(ctx)
				time.Sleep(time.Second)
				w.hist.add(Event{What: TermEnd, Replica: "r1-0", Ring: "web", Member: "m-c", Deadline: time.Now()}) // m-c died
				time.Sleep(time.Second)
				patch("p-00-web", `{"metadata":{"labels":{"`+webLabel+`":"m-b"}}}`) // straight to m-b while p-00 sits on live m-a
				time.Sleep(time.Second)
				return moves
			})
			if got["children follow parents"] != 1 {
				t.Errorf("child p-00-web relabelled %q→m-b while its parent p-00 sits on m-a in its term: violations %v, want one of children follow parents", from, got)
			}
		})
	}
}
