package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestStreamedObjectsAreGatheredOncePerKeyInArrivalOrder(t *testing.T) {
	g := newGathered[*corev1.ConfigMap]()
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	for _, ev := range []watch.Event{
		{Type: watch.Added, Object: cm("b", "1")},
		{Type: watch.Added, Object: cm("a", "2")},
		{Type: watch.Deleted, Object: cm("b", "3")},
		{Type: watch.Added, Object: cm("c", "4")},
		{Type: watch.Added, Object: cm("b", "5")},
		{Type: watch.Modified, Object: cm("a", "6")},
	} {
		require.NoError(t, g.add(ev))
	}
	var got []string
	for _, obj := range g.items() {
		got = append(got, obj.Name+"@"+obj.ResourceVersion)
	}
	assert.Equal(t, []string{"b@5", "a@6", "c@4"}, got)

	assert.ErrorIs(t, g.add(watch.Event{Type: watch.Added, Object: &corev1.Secret{}}), ErrUnexpectedObject)
	assert.ErrorIs(t, g.add(watch.Event{Type: watch.Added, Object: cm("", "7")}), ErrUnexpectedObject, "no name, no key")
}
