package sharedinformer

import (
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
)

// An answer or a look older than servedAnswerAge serves only a check
// that has waited for its turn since before it was asked (wanted), so a
// factory that lives long while CRDs of many groups come and go (a
// controller following CRDs, each informer released once its CRD is
// deleted) must not keep one for every group version and group ever
// asked about (a review proved it kept them all, about 785 B a group).
// Here 10,000 deleted groups, each checked as the reflector does on a
// 404 (a check, then a second look), then servedForgetAge and a little
// more with no check but one, of another group.
func TestServedChecksForgetAnswersOlderThanServedForgetAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const groups = 10000
		served := newServedResources(&goneDiscovery{}, func(string) {})
		ctx := t.Context()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range groups {
			isServed := served.For(schema.GroupVersionResource{Group: fmt.Sprintf("g%d.churn.listwatch.dev", i), Version: "v1", Resource: "widgets"}, "")
			if _, err := isServed(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := isServed(reflector.WithSecondLook(ctx)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(servedForgetAge + servedAnswerAge) // every informer released; nothing asked about those groups since
		if _, err := served.For(schema.GroupVersionResource{Group: "last.listwatch.dev", Version: "v1", Resource: "widgets"}, "")(ctx); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		served.turn <- struct{}{}
		answers, looks := len(served.answers), len(served.looks)
		<-served.turn
		t.Logf("heap kept: about %d bytes per deleted group", (int64(after.HeapAlloc)-int64(before.HeapAlloc))/groups)
		if answers > 1 || looks > 1 {
			t.Fatalf("%v after the last check of %d deleted groups, the served checks keep %d answers and %d looks (at most 1 each is of use: the last check's)", servedForgetAge+servedAnswerAge, groups, answers, looks)
		}
	})
}
