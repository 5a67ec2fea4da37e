package sharedinformer

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestTheDueTableStaysBoundedWhileNothingPops: with nothing cached a
// resync replays nothing, no key pops, and nothing drops what was
// recorded for it; the table keeps the newest maxDue resyncs.
func TestTheDueTableStaysBoundedWhileNothingPops(t *testing.T) {
	var i Informer[*corev1.ConfigMap]
	due := []*listener[*corev1.ConfigMap]{{}}
	for n := uint64(1); n <= 3*maxDue; n++ {
		i.recordDue(n, due)
	}
	require.Len(t, i.dueAt, maxDue)
	var kept []uint64
	for n := range i.dueAt {
		kept = append(kept, n)
	}
	assert.Equal(t, uint64(2*maxDue+1), slices.Min(kept), "the oldest go first")
}
