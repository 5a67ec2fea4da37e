package sharedinformer_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/sharedinformer"
)

// A watch DELETED event whose final object the transform rejects still
// deletes the last accepted version (SetTransform's doc). The cache has
// then applied that event, so LastSyncResourceVersion must reach the
// event's resourceVersion, as it does for a rejected ADDED or MODIFIED
// (a bookmark at the event's version): a reader waiting for its own
// delete's resourceVersion (WaitFor, package readyourwrites) must not
// wait for some later, unrelated change or the next bookmark.
func TestADeleteWhoseFinalStateTheTransformRejectsMovesTheAppliedResourceVersionToTheDelete(t *testing.T) {
	processed := make(chan informer.TraceEvent, 64)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		OnError: func(error) {},
		Trace: func(e informer.TraceEvent) {
			if e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindProcessed && e.Key == "default/a" {
				processed <- e
			}
		},
	})
	require.NoError(t, inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm.Labels["reject"] != "" {
			return nil, errors.New("rejected")
		}
		return cm, nil
	}))
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	<-processed // a's add

	// a's final state, as the server sends it with the delete, is one the
	// transform rejects.
	rejected := configMap("a")
	rejected.Labels = map[string]string{"reject": "yes"}
	_, err = lw.Update(rejected) // rejected: a bookmark at its version
	require.NoError(t, err)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	deletedAt := lw.ResourceVersion()

	var done informer.TraceEvent
	select {
	case done = <-processed:
	case <-time.After(hangGuard):
		t.Fatal("a's delete was never processed")
	}
	_, cached := inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.False(t, cached, "the delete deleted the last accepted version")
	// KindProcessed carries the applied resourceVersion after the pop.
	require.Equal(t, deletedAt, done.ResourceVersion,
		"a's delete at %s is applied (a is gone from the cache), but the cache says it is at %s: WaitFor(%s) would wait for the next change or bookmark", deletedAt, done.ResourceVersion, deletedAt)
	require.Equal(t, deletedAt, inf.LastSyncResourceVersion())
}
