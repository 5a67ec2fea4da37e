package sharedinformer

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// servedForgetAge's doc: "memory follows the groups asked about in the
// last minute, not every group a long-lived factory ever asked about
// (CRDs that come and go)". Answers are forgotten only when a served
// check takes the turn (takeTurn); describe, InformerFor's look at
// discovery, keeps its answers with tryKeep and never forgets any. A
// factory whose informers never get a 404 (the common case: each one
// released before its CRD is deleted) runs no served check at all, so
// every group version InformerFor ever asked about stays. Here 10,000
// CRD groups, each asked about once by InformerFor's describe, then
// servedForgetAge and a little more, then one InformerFor of another.
func TestDescribeForgetsAnswersOlderThanServedForgetAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const groups = 10000
		served := newServedResources(&goneDiscovery{}, func(string) {})
		ctx := t.Context()
		for i := range groups {
			gvr := schema.GroupVersionResource{Group: fmt.Sprintf("g%d.churn.listwatch.dev", i), Version: "v1", Resource: "widgets"}
			if _, _, err := served.describe(ctx, gvr, false); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(servedForgetAge + servedAnswerAge) // every CRD's informer made and released long ago
		if _, _, err := served.describe(ctx, schema.GroupVersionResource{Group: "last.listwatch.dev", Version: "v1", Resource: "widgets"}, false); err != nil {
			t.Fatal(err)
		}
		served.turn <- struct{}{}
		answers := len(served.answers)
		<-served.turn
		if answers > 1 {
			t.Fatalf("%v after InformerFor last asked about %d CRD groups, the factory keeps %d discovery answers (at most 1 is of use: the last one's)", servedForgetAge+servedAnswerAge, groups, answers)
		}
	})
}
