package sharedinformer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A handler may release its own informer, say once it has seen what it
// was waiting for. Release cannot wait there for the informer to stop:
// the informer stops only once this very call of the handler returns. So
// it returns at once, and the informer stops when the handler returns.
// (The 30 s bound only ends a Release that deadlocks; one that does not
// returns long before.)
func TestReleaseFromTheInformersOwnHandlerReturnsAtOnce(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.create("octopodes", "a")
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "octopodes")))
	require.NoError(t, err)
	released := make(chan error, 1)
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(*unstructured.Unstructured, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			released <- sharedinformer.Release(ctx, f, inf)
		},
	})
	require.NoError(t, err)
	startFactory(t, f)

	assert.NoError(t, <-released, "Release from the informer's own handler")
	<-reg.Stopped()
	assert.ErrorIs(t, reg.Err(), sharedinformer.ErrInformerReleased)
	fresh, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "octopodes")))
	require.NoError(t, err, "the released informer stopped: its successor may be made")
	assert.NotSame(t, inf, fresh)
}

// OnError is a natural place to let an informer go: its resource is no
// longer served. OnError runs on the informer's own goroutine (its
// reflector's), which must return before the informer can stop, so
// Release called there returns at once as well, and the informer stops
// when OnError returns.
func TestReleaseFromOnErrorReturnsAtOnce(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("squids", "v1")
	zoo.create("squids", "a")
	var f *sharedinformer.Factory
	held := make(chan *sharedinformer.Informer[*unstructured.Unstructured], 1)
	released := make(chan error, 1)
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{OnError: func(err error) {
		if !errors.Is(err, reflector.ErrNotServed) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		released <- sharedinformer.Release(ctx, f, <-held)
	}})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "squids")))
	require.NoError(t, err)
	held <- inf
	calls := newCallLog()
	reg, err := inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)
	calls.waitFor(t, "add a (initial)")

	zoo.serveIn("squids") // the CRD is deleted
	zoo.endWatches()
	assert.NoError(t, <-released, "Release from OnError")
	<-reg.Stopped()
	assert.ErrorIs(t, reg.Err(), sharedinformer.ErrInformerReleased)
}
