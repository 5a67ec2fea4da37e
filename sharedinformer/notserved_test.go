package sharedinformer_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A list cut short by the deletion of its resource, after its first page
// reached the cache: a list reaches the cache in parts, so "the informer
// never synced" does not mean "nothing was stored". The resource is gone,
// so nothing of it may stay cached: the page's objects are deleted (final
// state unknown), and the informer stays unsynced, as one that never
// listed anything does.
func TestAResourceDeletedMidListLeavesNothingOfItsFirstPageCached(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.create("octopodes", "a", "b")
	zoo.hook(func(r *http.Request) {
		if r.URL.Query().Get("continue") != "" {
			zoo.serveIn("octopodes") // the CRD is deleted between the two pages
		}
	})
	events := newEventLog()
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{Trace: events.hook, OnError: func(error) {}})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooResource("v1", "octopodes")), sharedinformer.WithReflector(reflector.Tuning{PageSize: 1}))
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)

	// The reflector waits once it has done all it does about a resource
	// that is gone.
	seen := events.waitFor(t, "the backoff after not-served", after(reflector.KindNotServed, reflector.KindBackoff))
	require.True(t, slices.ContainsFunc(seen, func(e informer.TraceEvent) bool {
		return e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindTombstoned && e.Key == "ns/a"
	}), "the first page's ns/a stays cached though its resource is gone")
	final := calls.waitFor(t, "delete a (final state unknown)")
	assert.NotContains(t, final, "add b", "the second page never came")
	assert.Zero(t, inf.Indexer().Len(), "nothing of a resource that is gone stays cached")
	assert.False(t, inf.HasSynced(), "no list finished: the informer has not synced")
}

// after says whether the events hold first, then a later event of kind
// then, both from the reflector.
func after(first, then string) func([]informer.TraceEvent) bool {
	return func(events []informer.TraceEvent) bool {
		i := slices.IndexFunc(events, func(e informer.TraceEvent) bool {
			return e.Stage == informer.StageReflector && e.Kind == first
		})
		return i >= 0 && slices.ContainsFunc(events[i:], func(e informer.TraceEvent) bool {
			return e.Stage == informer.StageReflector && e.Kind == then
		})
	}
}
