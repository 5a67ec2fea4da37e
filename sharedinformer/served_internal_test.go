package sharedinformer

import (
	"context"
	"slices"
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
		served := newServedResources(d, func(string) {})
		gv := schema.GroupVersion{Group: "zoo.listwatch.dev", Version: "v1"}
		informers := []func(context.Context) (reflector.Serving, error){
			served.For(gv.WithResource("octopodes"), ""), served.For(gv.WithResource("squids"), ""), served.For(gv.WithResource("octopodes"), ""),
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

// movingDiscovery serves one resource of one group at one version at a
// time, as a CRD does, and moves it when told.
type movingDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	group, resource string

	// before, if set, runs before each request is answered (path is the
	// group version asked for, or "/apis" for the list of groups), with
	// mu not held: a test moves the CRD from it.
	before func(path string)

	mu      sync.Mutex
	version string // guarded by mu
}

func (d *movingDiscovery) moveTo(version string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.version = version
}

func (d *movingDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	if d.before != nil {
		d.before(gv)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if gv != d.group+"/"+d.version {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: d.resource}}}, nil
}

func (d *movingDiscovery) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	if d.before != nil {
		d.before("/apis")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v := metav1.GroupVersionForDiscovery{GroupVersion: d.group + "/" + d.version, Version: d.version}
	return &metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: d.group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}}}, nil
}

// A CRD that moves back to the version it left, within a second of a
// look at the group's versions, has moved, not gone. Before the fix, the
// informer of the version it left found its own version not served by a
// fresh answer, and then judged the other versions by the older list of
// the group's versions, which named only its own. Judged so, the resource
// looked gone, and the informer's handlers got a delete, final state
// unknown, for every object, all of them live (simulation, crds
// scenario, seed 20).
func TestAVersionLeftAsTheCRDMovesBackIsJudgedMovedByAnswersNoOlderThanItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &movingDiscovery{group: "zoo.listwatch.dev", resource: "squids", version: "v2"}
		served := newServedResources(d, func(string) {})
		v1 := served.For(schema.GroupVersionResource{Group: d.group, Version: "v1", Resource: d.resource}, "")
		v2 := served.For(schema.GroupVersionResource{Group: d.group, Version: "v2", Resource: d.resource}, "")

		answer, err := v2(t.Context()) // the informer of v2 looks: served
		require.NoError(t, err)
		require.True(t, answer.Served)
		time.Sleep(servedAnswerAge * 7 / 10)
		answer, err = v1(t.Context()) // the informer of v1 looks: moved to v2, by the group's versions, [v2]
		require.NoError(t, err)
		require.Equal(t, []string{"v2"}, answer.Elsewhere)

		time.Sleep(servedAnswerAge * 4 / 10) // v2's answer is now older than a second, the group's is not
		d.moveTo("v1")
		answer, err = v2(t.Context())
		require.NoError(t, err)
		assert.True(t, answer.Served || slices.Equal(answer.Elsewhere, []string{"v1"}),
			"v2 moved back to v1: served (by an answer still fresh: the 404 is retried) or moved, never gone; got %+v", answer)
	})
}

// A CRD that moves back from v2 to v1 while one check of v1 asks (the
// "no" for v1, the list of groups naming v2, then the ask for v2) looks
// gone to that check, and the reflector asks again a backoff later before
// it believes it. The second check must ask discovery again, not repeat
// the first one's answers from the shared cache, or it would only
// confirm the mistake.
func TestACheckAfterAGoneVerdictIsJudgedByAnswersAskedAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &movingDiscovery{group: "zoo.listwatch.dev", resource: "squids", version: "v2"}
		movedBack := false
		d.before = func(path string) {
			if path == d.group+"/v2" && !movedBack { // between the groups list and the ask for v2
				movedBack = true
				d.moveTo("v1")
			}
		}
		served := newServedResources(d, func(string) {})
		v1 := served.For(schema.GroupVersionResource{Group: d.group, Version: "v1", Resource: d.resource}, "")

		answer, err := v1(t.Context())
		require.NoError(t, err)
		require.True(t, movedBack, "the CRD moved back during the first check")
		require.False(t, answer.Served)
		require.Empty(t, answer.Elsewhere, "the first check cannot tell a move back from a deletion")

		time.Sleep(10 * time.Millisecond) // the reflector's backoff: far less than servedAnswerAge
		answer, err = v1(reflector.WithSecondLook(t.Context()))
		require.NoError(t, err)
		assert.True(t, answer.Served, "asked again, discovery says the CRD is back at v1: %+v", answer)
	})
}

// canceledDiscovery fails every request whose context has ended, as a
// real client does, and asks discovery otherwise.
type canceledDiscovery struct{ *countingDiscovery }

func (d canceledDiscovery) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.countingDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
}

// An informer stopped while its check asks discovery gets its context's
// error. That says nothing about the server, so the next informer to ask
// within the second does not get it too: it asks, and is answered.
func TestAnAnswerCutShortByItsCallersContextServesNoOtherInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := canceledDiscovery{&countingDiscovery{resources: map[string][]string{"zoo.listwatch.dev/v1": {"squids"}}, asked: map[string]int{}}}
		served := newServedResources(d, func(string) {})
		squids := served.For(schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}, "")

		stopped, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := squids(stopped)
		require.ErrorIs(t, err, context.Canceled)

		answer, err := squids(t.Context())
		require.NoError(t, err, "another informer's stop is not discovery's answer")
		assert.True(t, answer.Served)
	})
}

// hangingDiscovery answers nothing until release is closed; asked is
// closed when the first request arrives.
type hangingDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the method below is called
	asked, release                          chan struct{}
}

func (d hangingDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	close(d.asked) // one request only: a second would panic here
	<-d.release
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "squids"}}}, nil
}

// One check asks at a time, since the answers are shared. A check
// waiting its turn behind a request that hangs returns when its own
// context ends, so an informer being stopped is not held up by another's
// request.
func TestACheckWaitingBehindAHangingRequestReturnsWhenItsContextEnds(t *testing.T) {
	d := hangingDiscovery{asked: make(chan struct{}), release: make(chan struct{})}
	served := newServedResources(d, func(string) {})
	gvr := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}
	first := make(chan error, 1)
	go func() {
		_, err := served.For(gvr, "")(context.Background()) // holds the turn until release
		first <- err
	}()
	<-d.asked

	ctx, cancel := context.WithCancel(t.Context())
	waiting := make(chan error, 1)
	go func() {
		_, err := served.For(gvr, "")(ctx)
		waiting <- err
	}()
	cancel()
	select {
	case err := <-waiting:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(time.Minute): // only a check that never returns gets here
		t.Fatal("a check whose context ended still waits behind a hanging request")
	}
	close(d.release)
	require.NoError(t, <-first)
}

// Informers of a deleted resource (one a namespace, say) share the
// answers of discovery as informers of a served one do: thirty first
// looks within a second make one request of each kind. Only each
// informer's own look after its "gone" wants newer answers, and one
// request serves every informer whose "gone" came before it.
func TestInformersOfADeletedResourceShareDiscoverysAnswersBetweenTheirLooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &goneDiscovery{}
		served := newServedResources(d, func(string) {})
		gvr := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}
		informers := make([]func(context.Context) (reflector.Serving, error), 30)
		for i := range informers {
			informers[i] = served.For(gvr, "")
			answer, err := informers[i](t.Context())
			require.NoError(t, err)
			require.False(t, answer.Served)
			require.Empty(t, answer.Elsewhere)
		}
		assert.Equal(t, [2]int{1, 1}, [2]int{d.versions, d.list}, "thirty first looks: one request of each kind")

		time.Sleep(10 * time.Millisecond) // BackoffInitial: every informer's second look
		for _, isServed := range informers {
			answer, err := isServed(reflector.WithSecondLook(t.Context()))
			require.NoError(t, err)
			require.False(t, answer.Served)
		}
		// Each second look's own "no" is the first looks' (a "no" only
		// sends it to a look at the group); the look at the group is
		// asked once more, by the first of them, and serves the rest.
		assert.Equal(t, [2]int{1, 2}, [2]int{d.versions, d.list}, "thirty second looks: the list of groups asked once more, by the first of them")
	})
}

// ctxMovingDiscovery is movingDiscovery failing a request whose context
// has ended, as a real client does; cancel, if set, is called just before
// the next request is answered.
type ctxMovingDiscovery struct {
	*movingDiscovery
	cancel context.CancelFunc
}

func (d *ctxMovingDiscovery) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.movingDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
}

// A review proved it: informer A of squids gets a one-look "gone" (the
// CRD moved back to v1 during its look), and before A's second look
// another informer of squids is stopped while it asks (its own second
// look). Its failure, its
// context's, must not make A's second look take the first look's answers
// again, or A believes "gone" and deletes every live squid.
func TestAnotherInformersStopBetweenTheTwoLooksDoesNotMakeTheSecondReuseTheFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &movingDiscovery{group: "zoo.listwatch.dev", resource: "squids", version: "v2"}
		movedBack := false
		m.before = func(path string) {
			if path == m.group+"/v2" && !movedBack { // between the groups list and the ask for v2
				movedBack = true
				m.moveTo("v1")
			}
		}
		d := &ctxMovingDiscovery{movingDiscovery: m}
		served := newServedResources(d, func(string) {})
		gvr := schema.GroupVersionResource{Group: m.group, Version: "v1", Resource: m.resource}
		a, b := served.For(gvr, ""), served.For(gvr, "")

		answer, err := a(t.Context())
		require.NoError(t, err)
		require.True(t, movedBack)
		require.Empty(t, answer.Elsewhere, "A's first look: gone, wrongly")

		time.Sleep(5 * time.Millisecond)
		answer, err = b(t.Context()) // B's first look: A's answers, shared
		require.NoError(t, err)
		require.Empty(t, answer.Elsewhere)
		stopped, cancel := context.WithCancel(t.Context())
		d.cancel = cancel // B's second look asks, and B is stopped while it does
		_, err = b(reflector.WithSecondLook(stopped))
		require.ErrorIs(t, err, context.Canceled)

		time.Sleep(5 * time.Millisecond)
		answer, err = a(reflector.WithSecondLook(t.Context()))
		require.NoError(t, err)
		assert.True(t, answer.Served, "A's second look asks afresh and finds the CRD at v1: %+v", answer)
	})
}

// siblingDiscovery serves its group at v1 with octopodes only: the
// squids' CRD was deleted, the octopodes' (the same group and version)
// lives on, as a group of several CRDs does. It counts the requests of
// each kind.
type siblingDiscovery struct {
	discovery.DiscoveryInterfaceWithContext // nil: only the methods below are called

	mu             sync.Mutex
	versions, list int // guarded by mu
}

func (d *siblingDiscovery) ServerResourcesForGroupVersionWithContext(_ context.Context, gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.versions++
	if gv != "zoo.listwatch.dev/v1" {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "octopodes"}}}, nil
}

func (d *siblingDiscovery) ServerGroupsWithContext(context.Context) (*metav1.APIGroupList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.list++
	v := metav1.GroupVersionForDiscovery{GroupVersion: "zoo.listwatch.dev/v1", Version: "v1"}
	return &metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: "zoo.listwatch.dev", Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}}}, nil
}

// A review proved it: when the deleted resource's group version still
// serves another resource, the list of groups names it, so the version
// is asked again after the list; that newer "no" then made the next
// informer's look want a newer list, and so on, two requests a look. A
// "no" that the answer before it also said is known to hold since the
// earlier one, and a list asked in between serves.
func TestInformersOfADeletedResourceWhoseGroupVersionLivesOnShareAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &siblingDiscovery{}
		served := newServedResources(d, func(string) {})
		gvr := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}
		for range 30 {
			answer, err := served.For(gvr, "")(t.Context())
			require.NoError(t, err)
			require.False(t, answer.Served)
			require.Empty(t, answer.Elsewhere)
			time.Sleep(servedAnswerAge / 100)
		}
		assert.Equal(t, [2]int{2, 1}, [2]int{d.versions, d.list}, "thirty looks within a second: v1 asked twice (before and after the list), one list")
	})
}

// cutShortDiscovery is movingDiscovery that ends its caller's context
// just as the answer for cancelAt, read, comes back.
type cutShortDiscovery struct {
	*movingDiscovery
	cancelAt string
	cancel   context.CancelFunc
}

func (d *cutShortDiscovery) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	list, err := d.movingDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
	if d.cancel != nil && gv == d.cancelAt {
		d.cancel()
		d.cancel = nil
	}
	return list, err
}

// A review proved it: a second look whose "no" came back as its
// informer was stopped kept that answer out of the cache but went on, and
// judged the rest by the first look's answers: "gone", from the very
// answers it must not reuse, with no error. A look whose context ends
// while it asks says nothing but the context's error.
func TestASecondLookCutShortByItsContextSaysNothingButItsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &movingDiscovery{group: "zoo.listwatch.dev", resource: "squids", version: "v2"}
		flipped := false
		m.before = func(path string) {
			if path == m.group+"/v2" && !flipped { // the first look: between the list of groups and the ask for v2
				flipped = true
				m.moveTo("v1")
			}
		}
		d := &cutShortDiscovery{movingDiscovery: m}
		served := newServedResources(d, func(string) {})
		v1 := served.For(schema.GroupVersionResource{Group: m.group, Version: "v1", Resource: m.resource}, "")

		answer, err := v1(t.Context())
		require.NoError(t, err)
		require.True(t, flipped)
		require.Empty(t, answer.Elsewhere, "the first look: gone, wrongly")

		m.moveTo("v2") // the flip ends: the CRD is at v2
		time.Sleep(10 * time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		d.cancel, d.cancelAt = cancel, m.group+"/v2" // the look at the group asks v2, where the CRD is
		answer, err = v1(reflector.WithSecondLook(ctx))
		assert.ErrorIs(t, err, context.Canceled, "the answer: %+v", answer)
	})
}

// Informers of a deleted resource wait for it as the reflector does: a
// look, a second look BackoffInitial later, then the backoff. Their first
// looks share answers up to a second old; a second look wants answers
// asked after its own first look, and one request serves every second
// look whose first look came before it. So however many informers wait,
// out of step as the backoff's jitter leaves them, discovery gets about
// one list of groups per BackoffInitial, and one request for the group
// version, or two when the version still serves another resource (asked
// before the list and again after it): the bound servedAnswerAge states.
func TestInformersOfADeletedResourceWaitingForItAskAboutOncePerBackoffInitial(t *testing.T) {
	for name, tc := range map[string]struct {
		discovery    interface{ counts() (versions, list int) }
		versionsEach int
	}{
		"its group gone":             {&goneDiscovery{}, 1},
		"its group version lives on": {&siblingDiscovery{}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const backoffInitial, backoff, informers, run = 800 * time.Millisecond, 30 * time.Second, 100, time.Minute
				served := newServedResources(tc.discovery.(discovery.DiscoveryInterfaceWithContext), func(string) {})
				gvr := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				for i := range informers {
					isServed := served.For(gvr, "")
					wg.Go(func() {
						time.Sleep(time.Duration(i) * backoff / informers) // out of step
						for ctx.Err() == nil {
							if answer, err := isServed(ctx); err == nil && !answer.Served && len(answer.Elsewhere) == 0 {
								time.Sleep(backoffInitial)
								_, _ = isServed(reflector.WithSecondLook(ctx))
							}
							time.Sleep(backoff)
						}
					})
				}
				time.Sleep(run)
				cancel()
				wg.Wait()
				bound := int(run/backoffInitial) + 1
				versions, list := tc.discovery.counts()
				assert.LessOrEqual(t, versions, tc.versionsEach*bound, "requests for the group version in %v", run)
				assert.LessOrEqual(t, list, bound, "lists of groups in %v", run)
			})
		})
	}
}

func (d *goneDiscovery) counts() (versions, list int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.versions, d.list
}

func (d *siblingDiscovery) counts() (versions, list int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.versions, d.list
}
