package sharedinformer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// The buffer depth metric reads the Detail the listener writes: the two
// must keep agreeing.
func TestTheBufferDepthIsReadFromTheDeliveredDetailTheListenerWrites(t *testing.T) {
	n := notification[*corev1.ConfigMap]{kind: updateNotification}
	detail := fmt.Sprintf("%s to %s, %d waiting", n, "audit, to log", 3) // as listener.deliver formats it
	handler, waiting, ok := parseDelivered(detail)
	assert.True(t, ok)
	assert.Equal(t, "audit, to log", handler)
	assert.Equal(t, 3, waiting)
	_, _, ok = parseDelivered("update to audit")
	assert.False(t, ok, "no count: no value")
}

func TestAResourceVersionBecomesItsFifteenLeastSignificantDigits(t *testing.T) {
	v, ok := rvForMetrics("1234567890123456789")
	assert.True(t, ok)
	assert.Equal(t, 567890123456789.0, v)
	_, ok = rvForMetrics("opaque")
	assert.False(t, ok)
	_, ok = rvForMetrics("")
	assert.False(t, ok)
}
