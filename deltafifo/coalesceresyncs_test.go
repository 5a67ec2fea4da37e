package deltafifo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// TestACoalescedDeleteKeepsTheResyncNumberOfTheDeltaItMerged: two
// tombstones of one queued key are one delete, in the older's place, with
// the older's Resyncs: the key's oldest delta still says how many
// resyncs had begun when it was queued (resync 1 skipped it), and keys
// pop in order of that number, as the shared informer relies on. Found by
// an adversarial review: the merged delete took the newer's number.
func TestACoalescedDeleteKeepsTheResyncNumberOfTheDeltaItMerged(t *testing.T) {
	c := cache{key("a"): cm("a", "1")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Replace(nil, "2"))                               // a tombstoned, resyncs 0
	c[key("b")] = cm("b", "1")                                            // as if b had been popped meanwhile
	require.NoError(t, f.Resync())                                        // 1: skips a (queued), a Sync for b
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("b", "1")}, "3")) // a tombstoned again: coalesced

	type pop struct {
		key    string
		oldest uint64
	}
	var got []pop
	for f.Len() > 0 {
		require.NoError(t, f.Pop(context.Background(), func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
			got = append(got, pop{k.Name, d.Oldest().Resyncs})
			c.apply(k, d)
			return nil
		}))
	}
	assert.Equal(t, []pop{{"a", 0}, {"b", 1}}, got,
		"a was queued before resync 1 (which skipped it): its oldest delta must say 0, and keys must pop in order of that number")
}
