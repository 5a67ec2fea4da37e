package sharedinformer

import (
	"context"
	"fmt"
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

// A review proved it (after e7c6dab): the rule 991101d stated — two "no"s for a
// version do not prove it unserved in between, so a list of groups asked
// between them serves only the look that asked it — is kept only when
// both "no"s come before the list. When the look's own "no" is a cached
// one from before the list (another informer's), and the list (another
// informer's look) names the version alone, the look asks the version
// again after the list, gets its second "no" and judges by the three:
// the list between two "no"s, asked by another look, judges this one.
//
// Squids live at zoo/v2 throughout both of I's looks; octopodes live at
// zoo/v1 throughout; the fish informer waits for its deleted group as
// the reflector does. The squids' CRD serves v1 for a moment, twice,
// each time only between I's looks (the first time just before the
// first), while the fish informer asks the list of groups. This is
// TestAMovedResourceIsNotJudgedGoneByAListOfGroupsAskedBetweenTwoNos
// without its second octopodes refresh (B), with a reflector whose
// BackoffInitial (a Tuning knob, any value) is longer than
// servedAnswerAge, so that the octopodes' refresh between the looks is
// asked afresh.
func TestAMovedResourceIsNotJudgedGoneByAListOfGroupsAskedBetweenAnotherInformersNoAndItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const zoo, backoffInitial = "zoo.listwatch.dev", 1500 * time.Millisecond
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

		// A proxy's 404 for octopodes: zoo/v1 is asked (A: no squids).
		require.True(t, look(octopodes, t.Context()).Served)
		// The squids' CRD serves v1 for a moment; the fish informer's look
		// asks the list of groups then (G1: zoo [v1]).
		flipToV1()
		require.Empty(t, look(fish, t.Context()).Elsewhere)
		flipToV2()

		// I's first look, the CRD at v2 throughout it.
		first := look(squidsV1, t.Context())
		t.Logf("first look: %+v; requests so far %v", first, d.log)

		// Between the looks: a proxy's 404 for octopodes more than a
		// second later asks zoo/v1 again (A2: no squids); the CRD serves
		// v1 for a moment again, while the fish informer looks (G2: zoo [v1]).
		time.Sleep(servedAnswerAge + 100*time.Millisecond)
		require.True(t, look(octopodes, t.Context()).Served)
		flipToV1()
		require.Empty(t, look(fish, t.Context()).Elsewhere)
		flipToV2()
		time.Sleep(backoffInitial - servedAnswerAge - 100*time.Millisecond)

		// I's second look, BackoffInitial after the first, the CRD at v2
		// throughout it.
		second := look(squidsV1, reflector.WithSecondLook(t.Context()))
		t.Logf("second look: %+v; requests %v", second, d.log)

		gone := func(a reflector.Serving) bool { return !a.Served && len(a.Elsewhere) == 0 }
		assert.False(t, gone(first) && gone(second),
			"squids at v2 throughout both looks, yet both said gone: the reflector empties the store of live squids; first %+v, second %+v", first, second)
	})
}

// manyGonesDiscovery serves no resource at all: every group version is a
// 404 (each informer's CRD was deleted), and the list of groups names
// only the built-in "apps". It counts the lists of groups.
type manyGonesDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	mu             sync.Mutex
	versions, list int // guarded by mu
}

func (d *manyGonesDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.versions++
	return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
}

func (d *manyGonesDiscovery) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.list++
	v := metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}
	return &metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}}}, nil
}

// servedAnswerAge and docs/06 state the bound per group: a look at a
// group (the list of groups, then its versions) about once a second, or
// once per BackoffInitial while second looks come, however many
// informers of its resources ask. A review proved the bound false as it
// was stated then, per factory: informers of resources in different
// groups (an operator's CRDs uninstalled) each asked their own list.
// Here ten deleted groups have ten informers each, out of step, each
// looking, looking again BackoffInitial later, and waiting
// BackoffInitial: unshared, each informer would ask about 75 lists a
// minute; shared per group, the factory asks about 75 per group.
func TestInformersOfManyDeletedResourcesAskForTheListOfGroupsAboutOncePerBackoffInitialPerGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const backoffInitial, groups, perGroup, run = 800 * time.Millisecond, 10, 10, time.Minute
		d := &manyGonesDiscovery{}
		served := newServedResources(d, func(string) {})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for i := range groups * perGroup {
			isServed := served.For(schema.GroupVersionResource{Group: fmt.Sprintf("crd%d.listwatch.dev", i%groups), Version: "v1", Resource: fmt.Sprintf("widgets%d", i/groups)}, "")
			wg.Go(func() {
				time.Sleep(time.Duration(i) * backoffInitial / (groups * perGroup)) // out of step
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
		bound := groups * (int(run/backoffInitial) + 1)
		assert.LessOrEqual(t, d.list, bound, "lists of groups in %v for %d informers of %d deleted groups (group version requests: %d)", run, groups*perGroup, groups, d.versions)
		t.Logf("lists of groups: %d, group version requests: %d", d.list, d.versions)
	})
}

// The same with the default BackoffInitial (800ms, under servedAnswerAge),
// and a second informer of the squids at v1 (K: a metadata-only one, say)
// whose holder releases it after its first look. K's first look is judged
// as above: the octopodes' "no" (A), the fish's list of groups asked
// while the squids' CRD served v1 for a moment (G1), and its own "no"
// asked again after it. I's first look, half a second later, takes K's
// whole evidence (checkedLocked) and asks nothing, so the answer for
// zoo/v1 is more than a second old when the octopodes' next 404 asks it
// again, between I's looks; the CRD serves v1 for a moment again while
// the fish informer asks the list of groups (G2), and I's second look is
// judged by A2, G2 and its own "no" after them. The CRD is at v2
// throughout both of I's looks and K's, and moves only between other
// informers' requests.
func TestAMovedResourceIsNotJudgedGoneByListsOfGroupsAskedBetweenOtherInformersNosAtTheDefaultBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const zoo, backoffInitial = "zoo.listwatch.dev", 800 * time.Millisecond // reflector.Tuning's default
		d := &stateDiscovery{resources: map[string][]string{
			zoo + "/v1": {"octopodes"},
			zoo + "/v2": {"squids"},
		}}
		served := newServedResources(d, func(string) {})
		octopodes := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "octopodes"}, "")
		squidsV1 := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "squids"}, "")
		squidsV1Metadata := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "squids"}, "")
		fish := served.For(schema.GroupVersionResource{Group: "fish.listwatch.dev", Version: "v1", Resource: "salmon"}, "")
		look := func(isServed func(context.Context) (reflector.Serving, error), ctx context.Context) reflector.Serving {
			t.Helper()
			answer, err := isServed(ctx)
			require.NoError(t, err)
			return answer
		}
		gone := func(a reflector.Serving) bool { return !a.Served && len(a.Elsewhere) == 0 }
		flipToV1 := func() { d.set(zoo+"/v1", "octopodes", "squids"); d.set(zoo + "/v2") }
		flipToV2 := func() { d.set(zoo+"/v1", "octopodes"); d.set(zoo+"/v2", "squids") }

		// A proxy's 404 for octopodes: zoo/v1 is asked (A: no squids).
		require.True(t, look(octopodes, t.Context()).Served)
		// The CRD serves v1 for a moment while the fish informer looks (G1).
		flipToV1()
		require.Empty(t, look(fish, t.Context()).Elsewhere)
		flipToV2()
		// K's first look; then K is released: it takes no second look.
		k := look(squidsV1Metadata, t.Context())
		t.Logf("K's look: %+v; requests so far %v", k, d.log)

		// I's first look, half a second later.
		time.Sleep(500 * time.Millisecond)
		first := look(squidsV1, t.Context())
		t.Logf("I's first look: %+v; requests so far %v", first, d.log)

		// Between I's looks: the octopodes' next 404 (zoo/v1's answer is
		// now more than a second old: A2), and the CRD serves v1 for a
		// moment while the fish informer looks again (G2).
		time.Sleep(servedAnswerAge - 500*time.Millisecond + 100*time.Millisecond)
		require.True(t, look(octopodes, t.Context()).Served)
		flipToV1()
		require.Empty(t, look(fish, t.Context()).Elsewhere)
		flipToV2()

		// I's second look, BackoffInitial after its first.
		time.Sleep(backoffInitial - (servedAnswerAge - 500*time.Millisecond + 100*time.Millisecond))
		second := look(squidsV1, reflector.WithSecondLook(t.Context()))
		t.Logf("I's second look: %+v; requests %v", second, d.log)

		assert.False(t, gone(first) && gone(second),
			"squids at v2 throughout K's look and both of I's, yet both of I's said gone: the reflector empties the store of live squids; first %+v, second %+v", first, second)
	})
}

// The other versions are judged by answers no older than the look's own
// "no" (since), not than the list of groups that names them: an answer
// for v2 asked before the list, while the CRD served v1 for a moment, is
// taken as where the squids are not. Here every list of groups is I's
// own, asked after its "no", and no other look runs: the octopodes (zoo/v1)
// and the clams (zoo/v2) informers only get a proxy's 404 each and ask
// their own version, which lists their resource. The squids' CRD serves
// v1 for a moment between those two requests, before each of I's looks,
// and is at v2 throughout both. BackoffInitial is above servedAnswerAge,
// so that the octopodes' answer between the looks is asked afresh.
func TestAMovedResourceIsNotJudgedGoneByAnotherVersionsNoAskedBeforeTheListOfGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const zoo, backoffInitial = "zoo.listwatch.dev", 1500 * time.Millisecond
		d := &stateDiscovery{resources: map[string][]string{
			zoo + "/v1": {"octopodes"},
			zoo + "/v2": {"clams", "squids"},
		}}
		served := newServedResources(d, func(string) {})
		octopodes := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "octopodes"}, "")
		clams := served.For(schema.GroupVersionResource{Group: zoo, Version: "v2", Resource: "clams"}, "")
		squidsV1 := served.For(schema.GroupVersionResource{Group: zoo, Version: "v1", Resource: "squids"}, "")
		look := func(isServed func(context.Context) (reflector.Serving, error), ctx context.Context) reflector.Serving {
			t.Helper()
			answer, err := isServed(ctx)
			require.NoError(t, err)
			return answer
		}
		flipToV1 := func() { d.set(zoo+"/v1", "octopodes", "squids"); d.set(zoo+"/v2", "clams") }
		flipToV2 := func() { d.set(zoo+"/v1", "octopodes"); d.set(zoo+"/v2", "clams", "squids") }
		proxy404s := func() {
			require.True(t, look(octopodes, t.Context()).Served) // zoo/v1: no squids
			flipToV1()
			require.True(t, look(clams, t.Context()).Served) // zoo/v2: no squids
			flipToV2()
		}

		proxy404s()
		first := look(squidsV1, t.Context())
		t.Logf("first look: %+v; requests so far %v", first, d.log)

		time.Sleep(servedAnswerAge + 100*time.Millisecond)
		proxy404s()
		time.Sleep(backoffInitial - servedAnswerAge - 100*time.Millisecond)
		second := look(squidsV1, reflector.WithSecondLook(t.Context()))
		t.Logf("second look: %+v; requests %v", second, d.log)

		gone := func(a reflector.Serving) bool { return !a.Served && len(a.Elsewhere) == 0 }
		assert.False(t, gone(first) && gone(second),
			"squids at v2 throughout both looks, yet both said gone: the reflector empties the store of live squids; first %+v, second %+v", first, second)
	})
}
