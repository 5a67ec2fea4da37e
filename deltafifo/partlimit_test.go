package deltafifo_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// part makes n ConfigMaps named <prefix>-0 … <prefix>-(n-1).
func part(prefix string, n int) []*corev1.ConfigMap {
	objs := make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = cm(fmt.Sprintf("%s-%d", prefix, i), "1")
	}
	return objs
}

// popN pops n keys and applies nothing: the test only counts.
func popN(t *testing.T, f *fifo, n int) {
	t.Helper()
	for range n {
		require.NoError(t, f.Pop(t.Context(), func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { return nil }))
	}
}

// A reader that waits for room before each part: the list is held back
// while the consumer is behind, and goes on as it pops.
func TestWaitForRoomWaitsWhileTheQueueIsFullAndReturnsAsTheConsumerPops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{PartQueueLimit: 150})
		require.NoError(t, f.BeginReplace())
		var handed atomic.Int32
		done := make(chan error, 1)
		go func() {
			for i := range 5 {
				if err := f.WaitForRoom(t.Context()); err != nil {
					done <- err
					return
				}
				if err := f.ReplacePart(part(fmt.Sprint("p", i), 100)); err != nil {
					done <- err
					return
				}
				handed.Add(1)
			}
			done <- nil
		}()

		synctest.Wait() // the reader is blocked: on the queue, or done
		assert.Equal(t, int32(2), handed.Load(), "100 queued, then 200: the third part waits")
		assert.Equal(t, 200, f.Len())

		popN(t, f, 50) // 150 queued: still not below the limit
		synctest.Wait()
		assert.Equal(t, int32(2), handed.Load(), "it waits until the queue is below the limit")

		popN(t, f, 1) // 149
		synctest.Wait()
		assert.Equal(t, int32(3), handed.Load(), "room for one part")
		assert.Equal(t, 249, f.Len(), "never more than the limit plus one part")

		for handed.Load() < 5 { // a consumer that keeps up, slowly
			popN(t, f, 1)
			synctest.Wait()
			assert.LessOrEqual(t, f.Len(), 150+100-1)
		}
		require.NoError(t, <-done)
		require.NoError(t, f.FinishReplace("1"))
	})
}

func TestWaitForRoomReturnsWhenItsContextEndsOrTheFIFOCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{PartQueueLimit: 10})
		require.NoError(t, f.BeginReplace())
		require.NoError(t, f.ReplacePart(part("first", 10)))

		ctx, cancel := context.WithCancel(t.Context())
		cancelled := make(chan error, 1)
		go func() { cancelled <- f.WaitForRoom(ctx) }()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-cancelled, context.Canceled)

		closed := make(chan error, 1)
		go func() { closed <- f.WaitForRoom(t.Context()) }()
		synctest.Wait()
		f.Close()
		assert.ErrorIs(t, <-closed, deltafifo.ErrClosed)
	})
}

func TestWaitForRoomWithNoLimitNeverWaits(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{PartQueueLimit: -1})
	require.NoError(t, f.BeginReplace())
	for i := range 3 {
		require.NoError(t, f.WaitForRoom(t.Context()))
		require.NoError(t, f.ReplacePart(part(fmt.Sprint("p", i), deltafifo.DefaultPartQueueLimit)))
	}
	assert.Equal(t, 3*deltafifo.DefaultPartQueueLimit, f.Len())
}

// WaitForRoom's doc says it returns ErrClosed if the DeltaFIFO is closed,
// as every other call does after Close: with room in the queue too, and
// with no limit. (Found by review: it returned nil, as if a part could
// follow.)
func TestWaitForRoomOnAClosedFIFOIsErrClosedEvenWithRoom(t *testing.T) {
	for _, limit := range []int{0, -1} {
		f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{PartQueueLimit: limit})
		f.Close()
		assert.ErrorIs(t, f.WaitForRoom(t.Context()), deltafifo.ErrClosed, "PartQueueLimit %d", limit)
	}
}
