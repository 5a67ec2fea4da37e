package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/testenv"
)

// Found by a review. Someone made web's child immutable, then web's value
// changed. kube-apiserver refuses every change of an immutable
// ConfigMap's data (422), so the update is retried with backoff for
// ever and the child never carries the value: docs/08 promises "exactly
// N child ConfigMaps carrying the parent's data.value". This round fixed
// the same case for the skeleton's Secret (replace it); the example that
// docs/08 says "follows each of" the rules keeps the old bug. The real
// control plane, for the 422.
func TestAnImmutableChildStillEndsUpCarryingItsParentsValue(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	startController(t, cp, ns, 0)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	web := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{roleLabel: "parent"}},
		Data:       map[string]string{"replicas": "1", "value": "v1"},
	}).Do(t.Context()).Into(web))
	children := func() []corev1.ConfigMap {
		var list corev1.ConfigMapList
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{LabelSelector: roleLabel + "=child," + parentLabel + "=web"}, metav1.ParameterCodec).
			Do(context.Background()).Into(&list))
		return list.Items
	}
	require.Eventually(t, func() bool { c := children(); return len(c) == 1 && c[0].Data["value"] == "v1" }, 30*time.Second, 20*time.Millisecond)

	frozen := children()[0]
	yes := true
	frozen.Immutable = &yes
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name(frozen.Name).Body(&frozen).Do(t.Context()).Error())
	require.NoError(t, client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"value":"v2"}}`)).Do(t.Context()).Error())

	ok := assert.Eventually(t, func() bool {
		c := children()
		return controlledBy(c, web.UID) == 1 && c[0].Data["value"] == "v2"
	}, 15*time.Second, 50*time.Millisecond)
	var values []string
	for _, c := range children() {
		values = append(values, c.Name+"="+c.Data["value"])
	}
	require.True(t, ok, "web's child never carried web's new value: children %v", values)
}
