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

// Ready counts an informer released by its last holder as ready, synced
// or not, as the sync waits skip it: it will never sync and nobody holds
// it. docs/06's probe section says so, so that a reader does not take
// nil for "every cache holds its first list".
func TestReadyCountsAnInformerReleasedBeforeItSyncedAsReady(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("squids", "v1")
	listing := make(chan struct{}, 1)
	zoo.hook(func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/squids") { // the LIST is never answered
			select {
			case listing <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		}
	})
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{SyncTimeout: 30 * time.Second})
	require.NoError(t, err)
	squids, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.ForResource(zooResource("v1", "squids")))
	require.NoError(t, err)
	startFactory(t, f)
	<-listing
	var notSynced *sharedinformer.NotSyncedError
	require.ErrorAs(t, sharedinformer.Ready(squids), &notSynced, "listing, not synced")

	require.NoError(t, sharedinformer.Release(t.Context(), f, squids))
	assert.False(t, squids.HasSynced(), "it never got its list")
	assert.NoError(t, sharedinformer.Ready(squids), "released: counted as ready, as the sync waits skip it")
}
