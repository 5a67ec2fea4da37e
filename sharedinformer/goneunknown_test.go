package sharedinformer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A delete whose final state is unknown is inferred, not seen: from a
// relist that no longer finds the object, or, with no relist at all,
// from discovery no longer serving the resource (its CRD deleted), which
// empties the cache. Handler.OnDelete's comment once named only the
// relist.
func TestAResourceGoneDeletesWithFinalStateUnknownWithoutARelist(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.create("octopodes", "a")
	events := newEventLog()
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{Trace: events.hook, OnError: func(error) {}})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooResource("v1", "octopodes")),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}))
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)
	calls.waitFor(t, "add a (initial)")

	zoo.serveIn("octopodes") // the CRD is deleted
	zoo.endWatches()
	assert.Equal(t, []string{"add a (initial)", "delete a (final state unknown)"}, calls.waitFor(t, "delete a (final state unknown)"))
	seen := events.waitFor(t, "the not-served report", func(events []informer.TraceEvent) bool {
		return slices.ContainsFunc(events, func(e informer.TraceEvent) bool { return e.Kind == reflector.KindNotServed })
	})
	assert.False(t, slices.ContainsFunc(seen, func(e informer.TraceEvent) bool {
		return e.Stage == informer.StageReflector && e.Kind == reflector.KindRelist
	}), "inferred from discovery, with no relist")
}
