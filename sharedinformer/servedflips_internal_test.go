package sharedinformer

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/listwatch/informer/reflector"
)

// stateDiscovery serves what its map says, group version → resources,
// and lists every group that has a version with a resource. A test
// changes the map between looks (CRDs created, moved, deleted).
type stateDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	mu        sync.Mutex
	resources map[string][]string // guarded by mu
	log       []string            // guarded by mu: the requests, in order
}

func (d *stateDiscovery) set(gv string, resources ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resources[gv] = resources
}

func (d *stateDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, gv)
	if len(d.resources[gv]) == 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, r := range d.resources[gv] {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: r})
	}
	return list, nil
}

func (d *stateDiscovery) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, "/apis")
	groups := map[string][]string{}
	for gv, rs := range d.resources {
		if len(rs) > 0 {
			g, v, _ := strings.Cut(gv, "/")
			groups[g] = append(groups[g], v)
		}
	}
	list := &metav1.APIGroupList{}
	for g, vs := range groups {
		slices.Sort(vs)
		group := metav1.APIGroup{Name: g}
		for _, v := range vs {
			group.Versions = append(group.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
		}
		group.PreferredVersion = group.Versions[0]
		list.Groups = append(list.Groups, group)
	}
	return list, nil
}

// A review proved it: squids (zoo/v1's informer, I) live at zoo/v2
// during both of I's looks; octopodes live at zoo/v1 throughout, and an
// informer of a deleted group (fish) waits as the reflector does. The
// squids' CRD serves v1 for a moment, twice, each time only between I's
// looks, while the fish informer asks the list of groups. Two "no"s for
// squids at zoo/v1 (the octopodes' refreshes) do not prove squids unserved
// in between, so a list asked between them, naming v1 alone, must not
// judge I's looks: taken so, both said "gone", and the reflector emptied
// the store of live squids. A list serves only the look that asked it,
// and later looks whose own "no" is the one that look asked after it.
func TestAMovedResourceIsNotJudgedGoneByAListOfGroupsAskedBetweenTwoNos(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const zoo, backoffInitial = "zoo.listwatch.dev", 100 * time.Millisecond
		d := &stateDiscovery{resources: map[string][]string{
			zoo + "/v1": {"octopodes"},
			zoo + "/v2": {"squids"},
		}}
		served := newServedResources(d, func(string) {})
		octopodes := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "octopodes"}, "")
		squidsV1 := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "squids"}, "")
		fish := served.For(schema.GroupVersionResource{Group: "fish.listwatch.dev", Version: "v1", Resource: "salmon"}, "")
		look := func(isServed func(context.Context) (reflector.Serving, error), ctx context.Context) reflector.Serving {
			t.Helper()
			answer, err := isServed(ctx)
			require.NoError(t, err)
			return answer
		}
		flipToV1 := func() { d.set(zoo+"/v1", "octopodes", "squids"); d.set(zoo + "/v2") }
		flipToV2 := func() { d.set(zoo+"/v1", "octopodes"); d.set(zoo+"/v2", "squids") }

		// t=0: a proxy's 404 for octopodes; zoo/v1 is asked (A: no squids).
		require.True(t, look(octopodes, t.Context()).Served)
		time.Sleep(servedAnswerAge + 100*time.Millisecond)

		// The squids' CRD serves v1 for a moment; the fish informer's first
		// look asks the list of groups then (G1: zoo [v1]).
		flipToV1()
		require.Empty(t, look(fish, t.Context()).Elsewhere)
		flipToV2()
		// A proxy's 404 for octopodes: zoo/v1 is asked again (B: no squids,
		// replacing A).
		require.True(t, look(octopodes, t.Context()).Served)

		// I's first look, the CRD at v2 throughout it.
		first := look(squidsV1, t.Context())
		t.Logf("first look: %+v; requests so far %v", first, d.log)

		// Between the looks the CRD serves v1 for a moment again, while the
		// fish informer takes its second look (G2: zoo [v1]).
		time.Sleep(backoffInitial)
		flipToV1()
		require.Empty(t, look(fish, reflector.WithSecondLook(t.Context())).Elsewhere)
		flipToV2()

		// I's second look, the CRD at v2 throughout it.
		second := look(squidsV1, reflector.WithSecondLook(t.Context()))
		t.Logf("second look: %+v; requests %v", second, d.log)

		gone := func(a reflector.Serving) bool { return !a.Served && len(a.Elsewhere) == 0 }
		// The reflector takes the second look only after a "gone", and
		// believes "gone" (empties the store) only when both say it.
		assert.False(t, gone(first) && gone(second),
			"squids at v2 throughout both looks, yet both said gone: the reflector empties the store of live squids; first %+v, second %+v", first, second)
	})
}
