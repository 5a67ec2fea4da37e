package sharedinformer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/listwatch/informer/reflector"
)

// countingDiscovery answers which resources each group version holds,
// and counts how often it was asked.
type countingDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	resources map[string][]string // group version → resources

	mu    sync.Mutex
	asked map[string]int // guarded by mu
}

func (d *countingDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	d.asked[gv]++
	d.mu.Unlock()
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, r := range d.resources[gv] {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: r})
	}
	return list, nil
}

func (d *countingDiscovery) times(gv string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[gv]
}

// However many informers of one group version get a 404 at once, the
// factory asks discovery once a second at most: one answer serves them
// all for servedAnswerAge (a second), and an older one is asked again.
func TestOneDiscoveryAnswerServesEveryInformerOfItsGroupVersionForASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &countingDiscovery{resources: map[string][]string{"zoo.listwatch.dev/v1": {"octopodes", "squids"}}, asked: map[string]int{}}
		served := newServedResources(d, func() {})
		gv := schema.GroupVersion{Group: "zoo.listwatch.dev", Version: "v1"}
		informers := []func(context.Context) (reflector.Serving, error){
			served.For(gv.WithResource("octopodes")), served.For(gv.WithResource("squids")), served.For(gv.WithResource("octopodes")),
		}
		ask := func() {
			for _, isServed := range informers {
				answer, err := isServed(t.Context())
				require.NoError(t, err)
				assert.True(t, answer.Served)
			}
		}

		for range 10 {
			ask()
			time.Sleep(servedAnswerAge / 20)
		}
		assert.Equal(t, 1, d.times(gv.String()), "30 questions within a second: one request")

		time.Sleep(servedAnswerAge)
		ask()
		assert.Equal(t, 2, d.times(gv.String()), "an answer older than a second is asked again")
	})
}
