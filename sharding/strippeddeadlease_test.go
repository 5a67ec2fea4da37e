package sharding_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// Member a's replica is cut off (every request of it answered 503), so
// its Lease, still naming a, is never renewed nor released; then someone
// changes the Lease's labels: strips both, strips the member label, or
// gives it another ring's. The sharder finds Leases by both labels, so to
// it a's Lease is absent: it waits that out and takes a over by a create,
// which the Lease still there answers AlreadyExists, poll after poll.
// Nothing put the labels back (a could not write), so a's objects stayed
// labelled with it for good, reconciled by no one. A first fix put the
// labels back and judged the Lease again: its own write then read as a
// renew, and a was back on the ring for a LeaseDuration, given objects;
// a second took the Lease over at once, which took over a live member
// too (TestALiveMemberWhoseLabelsAreStrippedAfterEachWriteIsNotTakenOver).
//
// Passing: the sharder reads the Lease it could not see by name, judges
// it by its version, and takes it over once that version has gone
// unchanged for a LeaseDuration, labels put back; a's objects move to b,
// and from the label change on no object is labelled toward a, not even
// the parents created while a is off the ring. The takeovers metric
// counts one taken and none found alive: the create that met the Lease
// found it, not its member.
func TestADeadMembersLeaseStrippedOfItsRingLabelsIsFoundAgainAndItsObjectsMove(t *testing.T) {
	for name, patch := range map[string]string{
		"both labels removed":  `{"metadata":{"labels":null}}`,
		"member label removed": `{"metadata":{"labels":{"` + sharding.LeaseMemberLabel + `":null}}}`,
		"another ring's label": `{"metadata":{"labels":{"` + sharding.LeaseRingLabel + `":"web"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var cutOff, changed atomic.Bool
				c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
					if r.UserAgent() == "replica-a" && cutOff.Load() {
						return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
					}
					return fakeapiserver.Fault{}
				})
				const parents, later = 20, 10
				var dead atomic.Value // a's id
				dead.Store("")
				var mu sync.Mutex
				var towardDead []string // label writes toward a once its labels changed
				memory := metrics.NewMemory()
				m := joinTwo(t, c, c.as("replica-a"), parents, func(sc *sharding.SharderConfig) {
					sc.Metrics = must(metrics.NewRegistry(memory))
					sc.OnLabel = func(action string, key informer.Key, member string) {
						if changed.Load() && member == dead.Load().(string) {
							mu.Lock()
							towardDead = append(towardDead, action+" "+key.Name)
							mu.Unlock()
						}
					}
				})
				a, ctx, ns, cfg, guard := m.a, m.ctx, c.ns, c.cfg, time.Minute
				dead.Store(a)

				cutOff.Store(true)
				synctest.Wait()
				changed.Store(true)
				require.NoError(t, must(leaderelection.NewClient(cfg)).Patch(types.MergePatchType).Namespace(ns).Resource("leases").
					Name(sharding.LeaseName(ring, a)).Body([]byte(patch)).Do(ctx).Error())
				time.Sleep(4 * retryPeriod) // a few polls: a is off the ring
				for i := range later {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("later-%03d", i), Namespace: ns,
						Labels: map[string]string{"role": "parent"}}}
					require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error())
				}

				owners, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*(parents+later), guard)
				for _, owner := range owners {
					require.Equal(t, alive[0], owner, "an object stayed with the cut-off member %s", a)
				}
				time.Sleep(4 * leaseDuration) // and it stays so
				awaitConverged(ctx, t, cfg, ns, 1, 2*(parents+later), guard)
				mu.Lock()
				defer mu.Unlock()
				require.Empty(t, towardDead, "objects were labelled toward the cut-off member %s after its Lease's labels changed", a)
				taken, _ := memory.Value("listwatch_sharder_takeovers_total", ring, "taken")
				found, _ := memory.Value("listwatch_sharder_takeovers_total", ring, "alive")
				require.Equal(t, []float64{1, 0}, []float64{taken, found}, "takeovers: taken, found alive")
				requireNoOverlap(t, m.rec)
			})
		})
	}
}
