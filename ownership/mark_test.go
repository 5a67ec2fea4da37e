package ownership

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

func TestNewRefusesAManagerThatIsNotALabelValue(t *testing.T) {
	_, err := New("")
	assert.ErrorContains(t, err, "the manager is empty")
	_, err = New("secret copier")
	assert.ErrorContains(t, err, `manager "secret copier" is not a label value`)
	m, err := New("secret-copier")
	require.NoError(t, err)
	assert.Equal(t, "secret-copier", m.Manager())
}

func TestSetRefusesAnOwnerWithoutAUIDAndKeepsTheChildsOwnMarks(t *testing.T) {
	m, err := New("copier")
	require.NoError(t, err)
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}}}
	assert.ErrorContains(t, m.Set(child, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "shop"}}), "owner shop/o has no UID")
	assert.Len(t, child.Labels, 1, "nothing set on a refusal")

	require.NoError(t, m.Set(child, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "u1"}}))
	assert.Equal(t, "a", child.Labels["team"])
	assert.Equal(t, "x", child.Annotations["note"])
	key, uid, ok := m.Owner(child)
	assert.True(t, ok)
	assert.Equal(t, informer.Key{Name: "shop"}, key, "a cluster-wide owner's key has no namespace")
	assert.Equal(t, "u1", string(uid))
}

func TestOnlyAChildWithAllThreeMarksOfThisManagerIsOurs(t *testing.T) {
	m, err := New("copier")
	require.NoError(t, err)
	full := map[string]string{ManagedByLabel: "copier", OwnerUIDLabel: "u1"}
	key := map[string]string{OwnerAnnotation: "shop/settings"}
	cases := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		ours        bool
	}{
		{"all three", full, key, true},
		{"another manager's", map[string]string{ManagedByLabel: "other", OwnerUIDLabel: "u1"}, key, false},
		{"no owner UID", map[string]string{ManagedByLabel: "copier"}, key, false},
		{"no owner key", full, nil, false},
		{"an owner key that is no key", full, map[string]string{OwnerAnnotation: "a/b/c"}, false},
		{"no marks: a user's", nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web", Labels: c.labels, Annotations: c.annotations}}
			_, _, ok := m.Owner(obj)
			assert.Equal(t, c.ours, ok)
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u1"}}
			assert.Equal(t, c.ours, m.Owns(owner, obj), "Owns claims what Owner claims, for the owner the marks name")
			keys, err := Index[*corev1.ConfigMap](m)(obj)
			require.NoError(t, err)
			assert.Equal(t, c.ours, len(keys) == 1)
		})
	}
	var zero Mark
	_, _, ok := zero.Owner(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ManagedByLabel: ""}}})
	assert.False(t, ok, "the zero Mark claims nothing")
}

// An owner deleted and made anew under its name has the same key and a
// new UID. The children marked for the one before are still this
// controller's (Owner says ok), but not the new owner's: Owns says false,
// so its reconcile replaces them instead of taking them as its own.
func TestAnOwnerMadeAnewUnderItsNameDoesNotOwnItsPredecessorsChildren(t *testing.T) {
	m, err := New("copier")
	require.NoError(t, err)
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u1"}}
	anew := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u2"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}}
	require.NoError(t, m.Set(child, before))

	key, _, ok := m.Owner(child)
	assert.True(t, ok, "the predecessor's child is still this controller's")
	assert.Equal(t, informer.KeyFor(anew), key, "under the key the new owner has too")
	assert.True(t, m.Owns(before, child))
	assert.False(t, m.Owns(anew, child), "the owner made anew does not own its predecessor's child")

	require.NoError(t, m.Set(child, anew))
	assert.True(t, m.Owns(anew, child), "once marked for the new owner, it is the new owner's")
	assert.False(t, m.Owns(before, child))
}
