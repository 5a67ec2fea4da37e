package reflector

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// With no trace hook, no event is built (doc.go), nor its Detail: a
// resourceVersion's change, made for every watch event, costs the one
// allocation that keeps the new version and not a "from …" string too.
func TestWithNoTraceHookAResourceVersionChangeBuildsNoDetail(t *testing.T) {
	r := &Reflector[*corev1.ConfigMap]{}
	rvs := make([]string, 102)
	for i := range rvs {
		rvs[i] = strconv.Itoa(1000 + i)
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		r.setRV(rvs[i])
		i++
	})
	assert.LessOrEqual(t, allocs, 1.0, "allocations a change")
	assert.Equal(t, rvs[i-1], r.LastSyncResourceVersion())
}
