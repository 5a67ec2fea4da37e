package reflector

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// While the list's first batch is still being decoded, the later batches
// that other decoders finish cannot be handed on (parts go in list order),
// so they pile up. The reading waits once maxPending batches per decoder
// are in flight, instead of reading the rest of the list into memory; once
// the first batch is decoded, every item is handed on, in list order.
// Four decoders, so that three keep finishing batches behind the slow one.
func TestTheReadingWaitsWhenDecodedBatchesPileUpBehindASlowOne(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const batches = 100
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		decode := func(_ []byte, index int) (*corev1.ConfigMap, error) {
			if index < batchItems {
				<-release // the first batch decodes slowly
			}
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(index)}}, nil
		}
		var delivered []string
		d := newItemDecoder(decode, func(part []*corev1.ConfigMap) error {
			for _, obj := range part {
				delivered = append(delivered, obj.Name)
			}
			return nil
		})
		var read atomic.Int64
		done := make(chan error, 1)
		go func() {
			for range batches * batchItems {
				if err := d.addWith(func(buf []byte) ([]byte, error) { return append(buf, 'x'), nil }); err != nil {
					done <- err
					return
				}
				read.Add(1)
			}
			done <- d.finish()
		}()

		synctest.Wait() // the reader is blocked: on the slow batch, not on the end of the list
		inFlight := maxPending*runtime.GOMAXPROCS(0) + 1
		assert.LessOrEqual(t, read.Load(), int64(inFlight*batchItems),
			"the reading stops at %d batches in flight, not %d", inFlight, batches)
		assert.Empty(t, delivered, "nothing is handed on before the first batch")

		close(release)
		require.NoError(t, <-done)
		require.Len(t, delivered, batches*batchItems)
		for i, name := range delivered {
			if name != fmt.Sprint(i) {
				t.Fatalf("item %d handed on as %s: parts out of list order", i, name)
			}
		}
	})
}

// Each LIST answer is read through an itemDecoder, however small: a page
// of two items, a relist of a quiet namespace. Their buffers (batchBytes
// each) must be shared between lists, not kept one per list: a pool of
// each decoder's own outlived its list by two garbage collections, so a
// thousand small lists between collections kept about 256 MB live, and
// the collector's next target grew by as much (a simulator's sweep grew
// to 12 GB). After a thousand lists of one item and one collection, the
// heap holds a few buffers at most, not one a list.
func TestManySmallListsShareTheirBuffersInsteadOfKeepingOneEach(t *testing.T) {
	const lists = 1000
	decode := func(_ []byte, index int) (*corev1.ConfigMap, error) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint(index)}}, nil
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the lists come between two collections, as in a busy process
	for range lists {
		d := newItemDecoder(decode, func([]*corev1.ConfigMap) error { return nil })
		require.NoError(t, d.addWith(func(buf []byte) ([]byte, error) { return append(buf, 'x'), nil }))
		require.NoError(t, d.finish())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grown, int64(32<<20), "%d lists of one item left the heap %d MiB larger after a collection (a buffer a list would be %d MiB)",
		lists, grown>>20, lists*batchBytes>>20)
}
