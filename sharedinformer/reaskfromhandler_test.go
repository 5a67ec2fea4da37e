package sharedinformer_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
)

// A handler may release its own informer (Release returns at once there),
// but it cannot have the released informer's successor: the successor
// takes the released one's metrics name, so InformerFor waits for it to
// stop, and it stops only once this very handler call returns. So
// InformerFor, asked on an informer's own goroutine while the released
// informer of that scope is still stopping, says so at once, with a
// *StillStoppingError, instead of waiting for itself. Asked again from
// another goroutine once the handler has returned, it makes the
// successor, which takes the name and syncs. (The 30 s deadline only ends
// an InformerFor that waits for itself: the test fails if it passed, and
// a slow machine does not take that long to do what returns at once.)
func TestAHandlerThatReleasesItsInformerAndAsksAgainIsToldToAskFromAnotherGoroutine(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.create("octopodes", "a")
	reg, err := metrics.NewRegistry(metrics.NewMemory())
	require.NoError(t, err)
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{Metrics: reg})
	require.NoError(t, err)
	res := sharedinformer.ForResource(zooResource("v1", "octopodes"))
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, res)
	require.NoError(t, err)
	type result struct {
		releaseErr, askErr error
		took               time.Duration
		waitedOut          bool // the deadline passed: a call waited for the handler itself
	}
	done := make(chan result, 1)
	handler, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(*unstructured.Unstructured, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			rerr := sharedinformer.Release(ctx, f, inf)
			_, aerr := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, res)
			done <- result{rerr, aerr, time.Since(start), ctx.Err() != nil}
		},
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer func() { stop(); f.Wait() }()
	f.Start(ctx)

	got := <-done
	require.NoError(t, got.releaseErr, "Release from the informer's own handler")
	t.Logf("Release and InformerFor took %v in the handler", got.took)
	assert.False(t, got.waitedOut, "Release and InformerFor from the handler return without waiting for it (%v)", got.took)
	var stopping *sharedinformer.StillStoppingError
	require.True(t, errors.As(got.askErr, &stopping), "InformerFor from the handler: want a *StillStoppingError, got %v", got.askErr)
	assert.Equal(t, inf.Name(), stopping.Name)
	assert.Equal(t, reflect.TypeFor[*unstructured.Unstructured](), stopping.Type)
	assert.ErrorContains(t, got.askErr, "ask from another goroutine")

	waitClosed(t, handler.Stopped(), 5*time.Second, "the released informer stopped once its handler returned")
	assert.ErrorIs(t, handler.Err(), sharedinformer.ErrInformerReleased)
	fresh, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, res)
	require.NoError(t, err, "asked again from another goroutine: the successor, with the released one's metrics name")
	assert.NotSame(t, inf, fresh)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(t.Context()))
	assert.Equal(t, 1, fresh.Indexer().Len(), "the successor lists from scratch")
}
