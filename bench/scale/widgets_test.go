package scale

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

// smallWidgets is how many Widgets the tests create: enough to span
// every namespace and several list parts, few enough for seconds.
const smallWidgets = 300

// One control plane holds smallWidgets Widgets, created the ladder's way
// (Populate); each subtest proves one behaviour on it.
func TestWidgetsAtSmallScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := testenv.Start(ctx, testenv.Options{})
	require.NoError(t, err)
	defer cp.Stop()
	require.NoError(t, Populate(ctx, cp.Config(), Widgets, smallWidgets))

	t.Run("PopulateCreatesExactlyTheWidgetsAskedFor", func(t *testing.T) {
		n, err := CountObjects(ctx, cp.Config(), Widgets)
		require.NoError(t, err)
		assert.Equal(t, smallWidgets, n)
	})
	t.Run("AWidgetReadBackHoldsItsPayload", func(t *testing.T) {
		client, err := clientFor(cp.Config(), Widgets)
		require.NoError(t, err)
		var got Widget
		require.NoError(t, client.Get().Namespace(namespaceOf(7)).Resource(Widgets).Name(NewWidget(7).Name).Do(ctx).Into(&got))
		assert.Equal(t, NewWidget(7).Spec, got.Spec)
		assert.Equal(t, NewWidget(7).Labels, got.Labels)
	})
	t.Run("InstallingTheCRDAgainWaitsUntilItIsServed", func(t *testing.T) {
		require.NoError(t, installWidgetsCRD(ctx, cp.Config()))
	})
}

// An object of a shape the ladder does not have is an error before any
// request is sent.
func TestPopulatingAnUnknownShapeIsAnError(t *testing.T) {
	err := populate(context.Background(), nil, "gadgets", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no shape "gadgets"`)
}
