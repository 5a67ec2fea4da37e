package sharedinformer_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/sharedinformer"
)

// The cache is local: once it has synced, any number of readers get and
// list from it while the server serves not one request more, and a
// change on the server reaches it, over the watch already open, with no
// reader asking. In a bubble, synctest.Wait returns once the informer has
// applied the change, so the test needs no sleep.
func TestReadersOfTheCacheMakeNoRequestAndSeeTheServersChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
		for _, name := range []string{"a", "b"} {
			_, err := lw.Create(configMap(name))
			require.NoError(t, err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { _ = inf.Run(ctx); close(done) }()
		synctest.Wait()
		require.True(t, inf.HasSynced())
		served := lw.Stats()

		var readers sync.WaitGroup
		for range 20 {
			readers.Go(func() {
				for range 50 {
					assert.Len(t, inf.Lister().List(labels.Everything()), 2)
					_, err := inf.Lister().Namespace("default").Get("a")
					assert.NoError(t, err)
				}
			})
		}
		readers.Wait()
		assert.Equal(t, served, lw.Stats(), "2,000 reads by 20 readers, and not one request")

		changed := configMap("a")
		changed.Data = map[string]string{"v": "2"}
		updated, err := lw.Update(changed)
		require.NoError(t, err)
		synctest.Wait()
		got, err := inf.Lister().Namespace("default").Get("a")
		require.NoError(t, err)
		assert.Equal(t, updated.ResourceVersion, got.ResourceVersion, "the server's change is in the cache, and no reader asked for it")
		assert.Equal(t, served, lw.Stats(), "it came over the watch already open: no new request")

		cancel()
		<-done
	})
}
