package readyourwrites

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	si "github.com/listwatch/informer/sharedinformer"
)

// With OpaqueResourceVersions, a delete of unknown UID (Deleted with
// uid "") after a create recorded under another owner is the delete of
// that create's object: it is seen when that object's delete arrives,
// and the arrival wakes the key. The arrivals handler runs behind the
// cache: here B is asked about (Hold) once the cache has applied the
// create and the delete, before the handler was told of either, and is
// held; when the handler catches up, B's wake channel closes, though the
// informer changes no more. (Found by a review: the record woke only on
// the informer's changes, and B waited for MaxHold, counted stale.)
//
// The test plays the arrivals handler (its registration removed), so
// that its lag behind the cache is the same in every run.
func TestAnOpaqueDeleteOfUnknownUIDWakesWhenTheWriteBeforeItArrives(t *testing.T) {
	api := memlistwatch.New[*corev1.ConfigMap]()
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	require.NoError(t, si.WaitForCacheSync(ctx, inf))

	g, err := New(Options{OpaqueResourceVersions: true, MaxHold: time.Hour})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	require.NoError(t, c.trackErr)
	require.NoError(t, inf.RemoveEventHandler(c.registration)) // the test plays the arrivals handler
	<-c.registration.Stopped()

	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	created, err := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child", UID: "uid-child"}})
	require.NoError(t, err)
	key := informer.KeyFor(created)
	require.NoError(t, c.Wrote(ownerA, created))
	require.NoError(t, api.Delete(key))
	c.Deleted(ownerB, key, "", nil) // the DELETE's answer could not be decoded: UID unknown

	// The cache applies the create and the delete; the handler is behind.
	require.NoError(t, inf.WaitFor(ctx, api.ResourceVersion()))
	_, inCache := inf.Indexer().Get(key)
	require.False(t, inCache)
	held, wake, _ := g.Hold(ownerB)
	require.True(t, held, "the create has not arrived yet: B waits")

	// The handler catches up: the create arrives, then its delete.
	c.arrivals.OnAdd(created, false)
	c.arrivals.OnDelete(created, false)

	select {
	case <-wake:
	case <-time.After(time.Minute):
		heldNow, _, _ := g.Hold(ownerB)
		t.Fatalf("the write before the delete arrived and the cache no longer holds the object (Hold now says held=%v), but B's wake channel never closed: a queue waits until MaxHold, and counts B stale", heldNow)
	}
}
