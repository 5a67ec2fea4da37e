package simulation

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharding"
)

// "Moves only by drain" (doc.go: "a live member's object moves to another
// member only through an acknowledged drain"). The acknowledgement is the
// member's write that removes its label from the drained object; a
// sharder that removes the label itself, without waiting for it, and
// gives the object to another member, moves it off a live member that
// may still be reconciling it. The checker's watch sees the same three
// versions either way (drained, unlabelled, labelled for m-b), so it
// must tell by who wrote the second: the subtest "the member
// acknowledges" passes, "the sharder unlabels it" must report the move.
func TestADrainedObjectUnlabelledByTheSharderNotItsMemberBreaksMovesOnlyByDrain(t *testing.T) {
	drainLabel := sharding.Shard{Ring: "web"}.DrainLabel()
	for _, tc := range []struct {
		name  string
		agent string // who sends the unlabelling write
		want  int
		by    string // the history's Unlabelled event names the writer
	}{
		{"the member acknowledges", "", 0, "by a member of r0-0"},
		{"the sharder unlabels it", sharderAgentPrefix + "web", 1, "by r0-0's sharder of ring web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var unlabelled []string // the history's Unlabelled events, printed
			got := watchedAndChecked(t, func(ctx context.Context, w *world, put func(*corev1.ConfigMap) *corev1.ConfigMap, patch func(string, string)) func() []move {
				w.hist.add(Event{What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-a", Fence: 1})
				w.hist.add(Event{What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-b", Fence: 2})
				put(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p-00", Labels: map[string]string{"app": "sim", webLabel: "m-a"}}})
				moves := w.watchLabels(ctx)
				time.Sleep(time.Second)
				patch("p-00", `{"metadata":{"labels":{"`+drainLabel+`":"true"}}}`) // the sharder drains it
				time.Sleep(100 * time.Millisecond)
				cm := &corev1.ConfigMap{}
				if err := w.core.Get().Namespace(Namespace).Resource("configmaps").Name("p-00").Do(ctx).Into(cm); err != nil {
					t.Fatal(err)
				}
				// The acknowledgement's write (sharding's patchAcknowledgement),
				// sent by whoever tc names, to the server through the checker's
				// handlers, as a replica's requests reach it.
				body := `{"metadata":{"resourceVersion":"` + cm.ResourceVersion + `","labels":{"` + webLabel + `":null,"` + drainLabel + `":null}}}`
				req := httptest.NewRequestWithContext(ctx, http.MethodPatch, "/api/v1/namespaces/"+Namespace+"/configmaps/p-00", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/merge-patch+json")
				if tc.agent != "" {
					req.Header.Set("User-Agent", tc.agent)
				}
				rec := httptest.NewRecorder()
				w.notingUnlabels("r0-0", w.srv).ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("the unlabelling write: %d %s", rec.Code, rec.Body)
				}
				time.Sleep(100 * time.Millisecond)
				patch("p-00", `{"metadata":{"labels":{"`+webLabel+`":"m-b"}}}`) // given to m-b while m-a's term runs
				time.Sleep(time.Second)
				for _, e := range w.hist.Events() {
					if e.What == Unlabelled {
						unlabelled = append(unlabelled, fmt.Sprintf("%s %s %s %s %s", e.Replica, e.Ring, e.Object, e.Version, e.Detail))
					}
				}
				want := fmt.Sprintf("r0-0 web p-00 %s %s", cm.ResourceVersion, tc.by)
				if len(unlabelled) != 1 || unlabelled[0] != want {
					t.Errorf("the history's unlabelled events: %q, want [%q]", unlabelled, want)
				}
				return moves
			})
			if got["moves only by drain"] != tc.want || len(got) > tc.want {
				t.Errorf("p-00 drained from m-a, unlabelled (%s), then given to m-b in m-a's term: violations %v, want %d of moves only by drain",
					tc.name, got, tc.want)
			}
		})
	}
}
