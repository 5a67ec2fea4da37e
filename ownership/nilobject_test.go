package ownership_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/ownership"
)

// The project's rule: bad input gets a clear error naming what was
// wrong, never a panic: as for a zero Mark and an owner without UID, a
// nil child or owner is an error. (Found by a bug hunt: it panicked.)
func TestSetOfANilChildOrOwnerIsAnErrorNotAPanic(t *testing.T) {
	mark, err := ownership.New("copier")
	assert.NoError(t, err)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u1"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
	for name, call := range map[string]func() error{
		"nil child":     func() error { return mark.Set((*corev1.ConfigMap)(nil), owner) },
		"nil owner":     func() error { return mark.Set(child, (*corev1.ConfigMap)(nil)) },
		"nil interface": func() error { return mark.Set(child, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			assert.NotPanics(t, func() { err = call() })
			assert.ErrorContains(t, err, "is nil")
		})
	}
}

// Owner and Owns are called from handlers on whatever the informer hands
// them; a nil object is "not ours", not a crash of the handler.
func TestOwnerOfANilObjectIsNotOursNotAPanic(t *testing.T) {
	mark, _ := ownership.New("copier")
	assert.NotPanics(t, func() { _, _, ok := mark.Owner((*corev1.ConfigMap)(nil)); assert.False(t, ok) })
}
