package sharedinformer

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// goneDiscovery serves nothing, as after the deletion of every CRD the
// informers ask about: each group version is a 404, and the list of
// groups names none. It counts the requests of each kind, and may answer
// as a loaded server does: each request after latency, and the list of
// groups with a 429 (API Priority and Fairness) until throttledUntil.
type goneDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	latency        time.Duration
	throttledUntil time.Time

	mu             sync.Mutex
	versions, list int // guarded by mu
}

func (d *goneDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	time.Sleep(d.latency)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.versions++
	return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
}

func (d *goneDiscovery) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	time.Sleep(d.latency)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.list++
	if time.Now().Before(d.throttledUntil) {
		return nil, apierrors.NewTooManyRequests("the server is overloaded", 1)
	}
	return &metav1.APIGroupList{}, nil
}
