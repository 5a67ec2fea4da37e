package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer"
)

func TestIsNilSeesATypedNilThatAnInterfaceCheckMisses(t *testing.T) {
	var pod *corev1.Pod
	var asAny any = pod
	assert.False(t, asAny == nil, "the trap: a typed nil is not a nil interface")
	assert.True(t, informer.IsNil(pod))
	assert.False(t, informer.IsNil(&corev1.Pod{}))
	assert.True(t, informer.IsNil[*unstructured.Unstructured](nil))
}
