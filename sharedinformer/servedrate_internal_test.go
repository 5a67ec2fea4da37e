package sharedinformer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
)

// servedAnswerAge's comment and docs/06 state the bound per group: about
// one look at a group (a list of groups, then its versions) a second, or
// one per BackoffInitial, however many informers of its resources ask.
// A review proved that a look that failed was not kept (lookLocked),
// while a failed answer for a group version was (gvLocked): so while the
// list of groups failed, as it does when the server sheds load, every
// informer's check asked its own look, and the bound was per informer
// (700 lists a minute here), not per group. A failed look is kept now. Here
// one deleted group has 100 informers, out of step, each checking as the
// reflector does: an error is "cannot tell", retried after a backoff that
// doubles from BackoffInitial to 30 s. The bound the docs state for one
// group is about run/BackoffInitial + 1 lists.
func TestAGroupsLooksStayBoundedWhileTheListOfGroupsFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const backoffInitial, backoffMax, informers, run = 800 * time.Millisecond, 30 * time.Second, 100, time.Minute
		d := &goneDiscovery{throttledUntil: time.Now().Add(run)}
		served := newServedResources(d, func(string) {})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for i := range informers {
			isServed := served.For(schema.GroupVersionResource{Group: "crd.listwatch.dev", Version: "v1", Resource: fmt.Sprintf("widgets%d", i%10)}, "")
			wg.Go(func() {
				time.Sleep(time.Duration(i) * backoffInitial / informers) // out of step
				backoff := backoffInitial
				for ctx.Err() == nil {
					if answer, err := isServed(ctx); err == nil && !answer.Served && len(answer.Elsewhere) == 0 {
						time.Sleep(backoffInitial)
						_, _ = isServed(reflector.WithSecondLook(ctx))
					}
					time.Sleep(backoff)
					backoff = min(2*backoff, backoffMax)
				}
			})
		}
		time.Sleep(run)
		cancel()
		wg.Wait()
		d.mu.Lock()
		defer d.mu.Unlock()
		bound := int(run/backoffInitial) + 1
		t.Logf("lists of groups: %d, group version requests: %d", d.list, d.versions)
		assert.LessOrEqual(t, d.list, bound, "lists of groups in %v for %d informers of one deleted group, while the list fails (group version requests: %d)", run, informers, d.versions)
	})
}

// servedAnswerAge's comment states, besides the bound on looks, "per
// group version, about one request a second for the informers' own
// checks", and one per look at its group on top. A review proved the
// comment's earlier words ("about one request a second") false: a look
// asks every version
// of the group afresh (lookLocked passes l.seq+1), so a version that
// lives on while a resource of it was deleted (octopodes stay at zoo/v1,
// squids' CRD is gone) is asked once per look: once per BackoffInitial
// while informers of the deleted resource take their second looks, and
// BackoffInitial is a Tuning knob. Here 100 informers of squids at
// zoo/v1, out of step, each checking and looking again BackoffInitial
// later as the reflector does, with BackoffInitial 200 ms.
func TestAGroupVersionThatLivesOnIsAskedAboutOnceASecondAndOncePerLookAtItsGroup(t *testing.T) {
	for _, backoffInitial := range []time.Duration{800 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(backoffInitial.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const zoo, informers, run = "zoo.listwatch.dev", 100, time.Minute
				d := &stateDiscovery{resources: map[string][]string{zoo + "/v1": {"octopodes"}}}
				served := newServedResources(d, func(string) {})
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				for i := range informers {
					isServed := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "squids"}, "")
					wg.Go(func() {
						time.Sleep(time.Duration(i) * backoffInitial / informers) // out of step
						for ctx.Err() == nil {
							if answer, err := isServed(ctx); err == nil && !answer.Served && len(answer.Elsewhere) == 0 {
								time.Sleep(backoffInitial)
								_, _ = isServed(reflector.WithSecondLook(ctx))
							}
							time.Sleep(backoffInitial)
						}
					})
				}
				time.Sleep(run)
				cancel()
				wg.Wait()
				d.mu.Lock()
				defer d.mu.Unlock()
				n, lists := 0, 0
				for _, p := range d.log {
					switch p {
					case zoo + "/v1":
						n++
					case "/apis":
						lists++
					}
				}
				t.Logf("%s requests: %d, lists of groups: %d in %v", zoo+"/v1", n, lists, run)
				assert.LessOrEqual(t, n, int(run/servedAnswerAge)+lists+1, "requests for one group version in %v: servedAnswerAge's comment says about one a second, and one per look at its group", run)
				assert.LessOrEqual(t, lists, int(run/backoffInitial)+1, "looks at the group in %v: about one per BackoffInitial", run)
			})
		})
	}
}
