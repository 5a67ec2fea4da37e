package indexer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// Writers and readers run in parallel (run with -race). Each writer owns
// its keys and moves them between two app values; readers check that what
// an index returns always agrees with the object returned; at the end
// nothing is lost and every index is exact.
func TestConcurrentWritersAndReadersLoseNothing(t *testing.T) {
	const writers, readers, keysPerWriter, rounds = 4, 4, 50, 20
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))

	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			ns := fmt.Sprintf("ns-%d", w)
			for r := range rounds {
				app := []string{"web", "db"}[r%2]
				for k := range keysPerWriter {
					obj := cm(ns, fmt.Sprintf("cm-%d", k), "app", app)
					if k%10 == 0 && r%3 == 1 && r < rounds-1 { // some keys come and go
						assert.NoError(t, idx.Delete(obj))
						continue
					}
					assert.NoError(t, idx.Update(obj))
				}
			}
		})
	}

	done := make(chan struct{})
	var reading sync.WaitGroup
	for range readers {
		reading.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, app := range []string{"web", "db"} {
					objs, err := idx.ByIndex("app", app)
					assert.NoError(t, err)
					for _, obj := range objs {
						assert.Equal(t, app, obj.Labels["app"], "an index never returns an object that lacks its value")
					}
				}
				_ = idx.List()
				_, _ = idx.Get(key("ns-0", "cm-0"))
				_, _ = idx.IndexValues(NamespaceIndex)
			}
		})
	}
	writing.Wait()
	close(done)
	reading.Wait()

	// The last round (r = 19, so "db") stored every key again.
	require.Equal(t, writers*keysPerWriter, idx.Len())
	db, err := idx.IndexKeys("app", "db")
	require.NoError(t, err)
	assert.Len(t, db, writers*keysPerWriter)
	web, _ := idx.IndexKeys("app", "web")
	assert.Empty(t, web)
	requireExact(t, idx)
}

// Reads share the lock, but a read does not always get in beside another:
// once a writer waits for the readers inside, sync.RWMutex keeps every
// new reader out until that writer is done, so a read can wait for a
// read through the write queued between them. (Found by review: the
// package doc said reads "never block each other".)
func TestAReadArrivingWhileAWriterWaitsForAnotherReadWaitsToo(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	require.NoError(t, idx.Add(cm("a", "1")))

	idx.mu.RLock() // a read in progress, as a List holds it
	wrote := make(chan error, 1)
	go func() { wrote <- idx.Add(cm("a", "2")) }()
	require.Eventually(t, func() bool { // the writer now waits for that read
		if idx.mu.TryRLock() {
			idx.mu.RUnlock()
			return false
		}
		return true
	}, time.Minute, time.Millisecond)
	assert.False(t, idx.mu.TryRLock(), "a new read gets in beside the read inside only if no writer waits")

	idx.mu.RUnlock()
	require.NoError(t, <-wrote)
	_, ok := idx.Get(key("a", "2"))
	assert.True(t, ok, "the writer went first, then the reads")
}
