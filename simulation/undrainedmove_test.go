package simulation

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// "Moves only by drain" (doc.go: "a live member's object moves to another
// member only through an acknowledged drain, as the checker's own watch
// sees it"). A sharder that moves an object off a live member in two
// writes, its ring label removed with no drain label ever set (no drain,
// so nothing acknowledged) and then set to another member, moves it as
// much as one write does: the old member may still be reconciling it
// when the new one starts. The checker's watch sees both writes, in
// order, yet records a move only when the label goes straight from one
// member to another (watch.go: from == "" || to == "" is skipped), so
// the two-write move goes unreported. The one-write move is reported:
// the subtest "one write" passes, "two writes, no drain" fails.
func TestAnObjectUnlabelledWithoutADrainThenGivenToAnotherLiveMemberBreaksMovesOnlyByDrain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		patches []string
	}{
		{"one write", []string{`{"metadata":{"labels":{"` + webLabel + `":"m-b"}}}`}},
		{"two writes, no drain", []string{`{"metadata":{"labels":{"` + webLabel + `":null}}}`, `{"metadata":{"labels":{"` + webLabel + `":"m-b"}}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := watchedAndChecked(t, func(ctx context.Context, w *world, put func(*corev1.ConfigMap) *corev1.ConfigMap, patch func(string, string)) func() []move {
				w.hist.add(Event{What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-a", Fence: 1})
				w.hist.add(Event{What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-b", Fence: 2})
				put(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-00", Labels: map[string]string{"app": "sim", webLabel: "m-a"}}})
				moves := w.watchLabels(ctx)
				time.Sleep(time.Second)
				for _, p := range tc.patches { // m-a's term runs throughout: it never let p-00 go
					patch("p-00", p)
					time.Sleep(100 * time.Millisecond)
				}
				time.Sleep(time.Second)
				return moves
			})
			if got["moves only by drain"] == 0 {
				t.Errorf("p-00 moved m-a→m-b (%d writes, no drain label ever set) while m-a was in its term: violations %v, want moves only by drain",
					len(tc.patches), got)
			}
		})
	}
}
