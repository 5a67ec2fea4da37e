package reflector_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// heldBackList is a reflector that lists 10 ConfigMaps in pages into a
// DeltaFIFO that holds partQueueLimit keys before the reader must wait,
// and that nothing pops: the test is the consumer.
func heldBackList(t *testing.T, partQueueLimit int, tuning reflector.Tuning) (*memlistwatch.ListerWatcher[*corev1.ConfigMap], *deltafifo.DeltaFIFO[*corev1.ConfigMap], *reflector.Reflector[*corev1.ConfigMap]) {
	t.Helper()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	for i := range 10 {
		_, err := lw.Create(cm("default", fmt.Sprintf("cm-%02d", i)))
		require.NoError(t, err)
	}
	fifo := must(deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{PartQueueLimit: partQueueLimit}))
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: fifo, Tuning: tuning}))
	return lw, fifo, r
}

// A relist in parts into a DeltaFIFO whose consumer falls behind: the
// reflector waits for room instead of queueing the whole list, and a
// reflector stopped while it waits returns.
func TestAListIsHeldBackWhileItsConsumerFallsBehindAndStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, fifo, r := heldBackList(t, 4, reflector.Tuning{PageSize: 2})
		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan error, 1)
		go func() { stopped <- r.Run(ctx) }()

		synctest.Wait()
		assert.Equal(t, 4, fifo.Len(), "two pages of two, then the list waits for the consumer")
		assert.Empty(t, r.LastSyncResourceVersion(), "the list is not finished")

		pop := func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { return nil }
		require.NoError(t, fifo.Pop(t.Context(), pop))
		synctest.Wait()
		assert.Equal(t, 5, fifo.Len(), "one key popped: room for one more page")

		cancel()
		synctest.Wait()
		select {
		case err := <-stopped:
			assert.NoError(t, err, "Run returns nil when its context ends")
		default:
			t.Fatal("the reflector did not return while it waited for room")
		}
	})
}

func TestAListHeldBackByItsConsumerFinishesOnceTheConsumerCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, fifo, r := heldBackList(t, 3, reflector.Tuning{PageSize: 2})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = r.Run(ctx) }()

		most, popped := 0, 0
		for r.LastSyncResourceVersion() == "" {
			synctest.Wait()
			most = max(most, fifo.Len())
			if fifo.Len() > 0 {
				require.NoError(t, fifo.Pop(t.Context(), func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { popped++; return nil }))
			}
		}
		assert.Equal(t, lw.ResourceVersion(), r.LastSyncResourceVersion())
		assert.LessOrEqual(t, most, 3+2-1, "never more queued than the limit plus one page")
		for fifo.Len() > 0 {
			require.NoError(t, fifo.Pop(t.Context(), func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { popped++; return nil }))
		}
		assert.Equal(t, 10, popped)
	})
}

// A consumer that does not catch up within Tuning.HoldBack: the list is
// handed over regardless, since a LIST not read in time would be ended by
// the server and start over, and never finish.
func TestAListHeldBackForLongerThanHoldBackIsHandedOverRegardless(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, fifo, r := heldBackList(t, 4, reflector.Tuning{PageSize: 2, HoldBack: 3 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = r.Run(ctx) }()

		synctest.Wait()
		assert.Equal(t, 4, fifo.Len(), "held back")
		time.Sleep(3*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 4, fifo.Len(), "still held back: patience is per page")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 6, fifo.Len(), "out of patience for this page: its part goes in")
		time.Sleep(2 * 3 * time.Second) // the last two pages, each after its own wait
		synctest.Wait()
		assert.Equal(t, 10, fifo.Len(), "the whole list, though nothing was popped")
		assert.Equal(t, lw.ResourceVersion(), r.LastSyncResourceVersion())
	})
}
