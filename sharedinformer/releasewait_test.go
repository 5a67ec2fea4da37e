package sharedinformer_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/sharedinformer"
)

// An informer released by its last holder will never sync, and nobody
// holds it: a sync wait under way stops waiting for it, and for its
// handlers, the moment it is released. Here the wait would otherwise last
// the factory's SyncTimeout and fail naming the released informer.
func TestASyncWaitStopsWaitingForAnInformerReleasedMeanwhile(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.serveIn("squids", "v1")
	zoo.create("octopodes", "a")
	listing := make(chan struct{}, 1)
	zoo.hook(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/squids") { // the squids' LIST is never answered
			select {
			case listing <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		}
	})
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{SyncTimeout: 30 * time.Second})
	require.NoError(t, err)
	octopodes, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "octopodes")))
	require.NoError(t, err)
	squids, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "squids")))
	require.NoError(t, err)
	octopusHandler, err := octopodes.AddEventHandler(newCallLog())
	require.NoError(t, err)
	squidHandler, err := squids.AddEventHandler(newCallLog())
	require.NoError(t, err)
	startFactory(t, f)
	require.NoError(t, sharedinformer.WaitForCacheSync(t.Context(), octopusHandler))
	<-listing

	waited := make(chan error, 1)
	go func() { waited <- f.WaitForCacheSync(t.Context(), octopusHandler, squidHandler) }()
	require.NoError(t, sharedinformer.Release(t.Context(), f, squids))
	assert.NoError(t, <-waited, "nobody holds the squids' informer: it is not waited for")
	assert.ErrorIs(t, squidHandler.Err(), sharedinformer.ErrInformerReleased)
}
