package sharedinformer

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
)

// docs/06: "informers of a deleted resource share looks ... about one
// look at the group per BackoffInitial however many of its informers
// wait". A look's age is counted from its first request, so a look that
// takes longer than servedAnswerAge (two requests of 600 ms) would be
// too old for anyone the moment it is done, and every informer queued
// behind it would ask a look of its own, one after the other (a review
// proved it: 200 looks, the last verdict after four minutes). A check
// takes what was asked while it waited. Here 100 informers of one
// deleted CRD, their watches ended at one instant, each checking and
// looking again BackoffInitial (800 ms) later, as the reflector does.
func TestInformersOfADeletedResourceShareALookThatTookLongerThanServedAnswerAge(t *testing.T) {
	for _, latency := range []time.Duration{400 * time.Millisecond, 600 * time.Millisecond} {
		t.Run(latency.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const backoffInitial, informers = 800 * time.Millisecond, 100
				d := &goneDiscovery{latency: latency}
				served := newServedResources(d, func(string) {})
				gvr := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}
				start := time.Now()
				var wg sync.WaitGroup
				for range informers {
					isServed := served.For(gvr, "")
					wg.Go(func() {
						if answer, err := isServed(t.Context()); err != nil || answer.Served || len(answer.Elsewhere) > 0 {
							t.Errorf("first check: %+v, %v", answer, err)
							return
						}
						time.Sleep(backoffInitial)
						if answer, err := isServed(reflector.WithSecondLook(t.Context())); err != nil || answer.Served || len(answer.Elsewhere) > 0 {
							t.Errorf("second look: %+v, %v", answer, err)
						}
					})
				}
				wg.Wait()
				took := time.Since(start)
				t.Logf("discovery latency %v: %d lists of groups, %d group version requests; the last informer's verdict after %v", latency, d.list, d.versions, took)
				if d.list > 4 {
					t.Errorf("discovery latency %v: %d informers of one deleted group asked %d looks (a look each, back to back for %v), not a few shared ones", latency, informers, d.list, took)
				}
			})
		})
	}
}
