package ownership_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// The copier copied shop/settings (UID 1) into a and b. While it was
// down, the owner was deleted and made anew, and the copier restarted
// copying into a only. The copy in b, marked for UID 1, whose owner is
// gone, is deleted: the new owner's reconcile deletes every child under
// its key that it does not want. (Found by review: it stayed for good.)
func TestAGoneOwnersCopyIsDeletedEvenWhenANewOwnerTakesItsName(t *testing.T) {
	cp := testenv.Shared(t)
	from, a, b := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	core := must(testenv.CoreV1Client(cp.Config()))
	get := func(ns string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		if err := core.Get().Namespace(ns).Resource("configmaps").Name("settings").Do(t.Context()).Into(cm); err != nil {
			require.True(t, apierrors.IsNotFound(err), "%v", err)
			return nil
		}
		return cm
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: from}, Data: map[string]string{"k": "v1"}}
	require.NoError(t, core.Post().Namespace(from).Resource("configmaps").Body(owner).Do(t.Context()).Into(owner))
	t.Run("first run, into a and b", func(t *testing.T) {
		startCopier(t, cp.Config(), from, a, b)
		require.Eventually(t, func() bool { return get(a) != nil && get(b) != nil }, time.Minute, 20*time.Millisecond)
	}) // the copier stops here

	require.NoError(t, core.Delete().Namespace(from).Resource("configmaps").Name("settings").Do(t.Context()).Error())
	remade := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: from}, Data: map[string]string{"k": "v2"}}
	require.NoError(t, core.Post().Namespace(from).Resource("configmaps").Body(remade).Do(t.Context()).Into(remade))

	c := startCopier(t, cp.Config(), from, a)
	require.Eventually(t, func() bool { cm := get(a); return cm != nil && c.mark.Owns(remade, cm) }, time.Minute, 20*time.Millisecond)
	require.Eventually(t, func() bool { return get(b) == nil }, time.Minute, 20*time.Millisecond,
		"the copy in b of the gone owner, not wanted by the owner that took its name, is deleted")
}
