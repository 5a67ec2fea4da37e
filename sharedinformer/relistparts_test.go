package sharedinformer_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// A relist reaches the cache part by part (a page at a time here), so a
// reader sees some objects in their new version and some in their old
// while it runs. What it must never see is a key missing that the old
// cache and the new list both hold, or one key twice: every List is one
// state of the cache, and the only deletions are the tombstones at the
// end.
func TestDuringARelistInPartsEveryListHoldsEveryKeyBothListsHold(t *testing.T) {
	// Short backoffs: the relist starts as soon as the watch can reconnect.
	fast := reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
	paged, streamed := fast, fast
	paged.PageSize = 50
	streamed.StreamingList = true // initial events in parts of 256
	t.Run("paged", func(t *testing.T) { everyListHoldsEveryKeyBothListsHold(t, paged) })
	t.Run("streamed", func(t *testing.T) { everyListHoldsEveryKeyBothListsHold(t, streamed) })
}

func everyListHoldsEveryKeyBothListsHold(t *testing.T, tuning reflector.Tuning) {
	const kept, doomed = 2000, 20
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Reflector: tuning})
	for i := range kept {
		_, err := lw.Create(configMap(fmt.Sprintf("kept-%04d", i)))
		require.NoError(t, err)
	}
	for i := range doomed {
		_, err := lw.Create(configMap(fmt.Sprintf("doomed-%02d", i)))
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)

	lw.Disconnect() // what follows is seen only by the relist
	for i := range kept {
		cm := configMap(fmt.Sprintf("kept-%04d", i))
		cm.Data["v"] = "2"
		_, err := lw.Update(cm)
		require.NoError(t, err)
	}
	for i := range doomed {
		require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: fmt.Sprintf("doomed-%02d", i)}))
	}
	lw.Compact() // no history to replay: the watch's 410 means a relist
	// The relist is done once the cache has applied this.
	relisted := lw.ResourceVersion()

	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	problems := make(chan string, 4)
	for range 4 {
		readers.Go(func() {
			for ctx.Err() == nil {
				if problem := checkOneState(inf.Indexer().List(), kept, doomed); problem != "" {
					problems <- problem
					return
				}
			}
		})
	}
	lw.Reconnect()
	// However long the readers make it take; a minute guards against a hang.
	waitCtx, stopWaiting := context.WithTimeout(context.Background(), time.Minute)
	err := inf.WaitFor(waitCtx, relisted)
	stopWaiting()
	cancel()
	readers.Wait()
	close(problems)
	for problem := range problems {
		t.Error(problem)
	}
	require.NoError(t, err, "the relist never ended")
	list := inf.Indexer().List()
	require.Len(t, list, kept, "the relist removed the doomed")
	for _, cm := range list {
		require.Equal(t, "2", cm.Data["v"], "the relist brought %s to its new version", cm.Name)
	}
}

// checkOneState reports what is wrong with one List of the cache taken
// during the relist, or "".
func checkOneState(list []*corev1.ConfigMap, kept, doomed int) string {
	seen := map[string]bool{}
	keptSeen := 0
	for _, cm := range list {
		if seen[cm.Name] {
			return "a List held " + cm.Name + " twice"
		}
		seen[cm.Name] = true
		if len(cm.Name) > 5 && cm.Name[:5] == "kept-" {
			keptSeen++
		}
	}
	if keptSeen != kept {
		return fmt.Sprintf("a List held %d of the %d objects that both lists hold", keptSeen, kept)
	}
	if len(list) > kept+doomed {
		return fmt.Sprintf("a List held %d objects, more than ever existed", len(list))
	}
	return ""
}
