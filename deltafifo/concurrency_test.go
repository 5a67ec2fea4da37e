package deltafifo_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// Producers write updates for their own keys while consumers pop. Once
// every producer is done and the queue is drained, the newest state each
// consumer saw for every key is that key's last write: nothing lost, even
// though many updates were coalesced into fewer pops.
func TestConcurrentProducersAndConsumersLoseNothing(t *testing.T) {
	const producers, keysEach, writesEach, consumers = 4, 50, 20, 3
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})

	var mu sync.Mutex
	newest := map[informer.Key]int{} // newest resourceVersion popped per key
	pops := 0
	ctx, cancel := context.WithCancel(context.Background())
	var consumersDone sync.WaitGroup
	for range consumers {
		consumersDone.Go(func() {
			for {
				err := f.Pop(ctx, func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
					rv, _ := strconv.Atoi(d.Newest().Object.ResourceVersion)
					mu.Lock()
					defer mu.Unlock()
					pops++
					if rv < newest[k] {
						return fmt.Errorf("%s went back from rv %d to %d", k, newest[k], rv)
					}
					newest[k] = rv
					return nil
				})
				if err != nil {
					if ctx.Err() == nil {
						assert.ErrorIs(t, err, deltafifo.ErrClosed)
					}
					return
				}
			}
		})
	}

	var producersDone sync.WaitGroup
	for p := range producers {
		producersDone.Go(func() {
			for w := 1; w <= writesEach; w++ {
				for k := range keysEach {
					obj := cm(fmt.Sprintf("p%d-k%d", p, k), strconv.Itoa(w))
					require.NoError(t, f.Update(obj))
				}
			}
		})
	}
	producersDone.Wait()
	f.Close() // consumers drain the rest, then see ErrClosed
	consumersDone.Wait()
	cancel()

	require.Len(t, newest, producers*keysEach)
	for k, rv := range newest {
		assert.Equal(t, writesEach, rv, "%s: the last write was not the last state popped", k)
	}
	t.Logf("%d updates arrived as %d pops", producers*keysEach*writesEach, pops)
}
