package readyourwrites

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAnAnswerSaysItsWriteDeletedTheObjectOnlyWhenNoFinalizerAndNoGraceRemain(t *testing.T) {
	now := metav1.Now()
	zero, thirty := int64(0), int64(30)
	cases := []struct {
		name    string
		meta    metav1.ObjectMeta
		deleted bool
	}{
		{"not being deleted", metav1.ObjectMeta{}, false},
		{"being deleted, a finalizer left", metav1.ObjectMeta{DeletionTimestamp: &now, DeletionGracePeriodSeconds: &zero, Finalizers: []string{"x"}}, false},
		{"the last finalizer removed", metav1.ObjectMeta{DeletionTimestamp: &now, DeletionGracePeriodSeconds: &zero}, true},
		{"no grace recorded: a Namespace being emptied, which still exists", metav1.ObjectMeta{DeletionTimestamp: &now}, false},
		{"a Pod in its grace period: it still exists", metav1.ObjectMeta{DeletionTimestamp: &now, DeletionGracePeriodSeconds: &thirty}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.deleted, deletedBy(&corev1.Pod{ObjectMeta: c.meta}))
		})
	}
}
