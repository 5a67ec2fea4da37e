package sharedinformer

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// InformerFor judges the RESTMapper's memory by describe, which never
// waits for the served checks' turn: a check holding it may be waiting
// on a discovery request that hangs, and an InformerFor must not wait on
// an informer's check. With the turn held it asks on its own; with the
// turn free again, the next describe takes the answer it kept.
func TestDescribeAsksOnItsOwnWhileACheckHoldsTheTurnAndSharesItsAnswerAfter(t *testing.T) {
	synctest.Test(t, describeWhileTheTurnIsHeld) // one instant: answers never age
}

func describeWhileTheTurnIsHeld(t *testing.T) {
	d := &countingDiscovery{resources: map[string][]string{"zoo.listwatch.dev/v1": {"squids"}}, asked: map[string]int{}}
	s := newServedResources(d, func(string) {})
	squids := schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "squids"}

	s.turn <- struct{}{} // a check holds the turn, waiting on a request
	_, listed, err := s.describe(t.Context(), squids, false)
	require.NoError(t, err)
	require.True(t, listed, "discovery lists squids")
	require.Equal(t, 1, d.times("zoo.listwatch.dev/v1"))
	<-s.turn // the check is done; the answer above was not kept (the turn was busy)

	for range 3 {
		_, listed, err = s.describe(t.Context(), squids, false)
		require.NoError(t, err)
		require.True(t, listed)
	}
	require.Equal(t, 2, d.times("zoo.listwatch.dev/v1"), "one more request, kept and shared by the next two")
	_, listed, err = s.describe(t.Context(), schema.GroupVersionResource{Group: "zoo.listwatch.dev", Version: "v1", Resource: "clams"}, false)
	require.NoError(t, err)
	require.False(t, listed, "a resource the answer does not list")
}
