package reflector

import (
	"fmt"
	"runtime"
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
