package ownership_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/ownership"
)

// The zero Mark marks nothing: its Set is an error. A child it marked
// (managed-by "") would be claimed by no Mark, found by no index, and
// outlive its owner. (Found by review: Set succeeded.)
func TestTheZeroMarksSetIsRefused(t *testing.T) {
	var zero ownership.Mark
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u1"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
	err := zero.Set(child, owner)
	_, _, claimed := zero.Owner(child)
	require.Error(t, err, "the zero Mark marked a child (labels %v) that no Mark claims (claimed: %t)", child.Labels, claimed)
}
