package sharding_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// A relabel reaches the old owner's informer as a delete, so a key whose
// object is absent from the member's cache is "not mine", never
// "deleted": Reconciler never calls the reconcile for it, nor for an
// object labelled for another member, and writes nothing. Only the
// member's own object is reconciled.
func TestReconcilerNeverCallsTheReconcileForAnObjectAbsentFromItsCache(t *testing.T) {
	shard := sharding.Shard{Ring: ring, Member: "a"}
	_, cms := cacheOf(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mine", ResourceVersion: "10",
			Labels: map[string]string{shard.Label(): "a"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "theirs", ResourceVersion: "11",
			Labels: map[string]string{shard.Label(): "b"}}})
	rec := &scriptedServer{}
	var called []informer.Key
	reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps",
		func(_ context.Context, key informer.Key) (workqueue.Result, error) {
			called = append(called, key)
			return workqueue.Result{}, nil
		})

	for _, name := range []string{"gone", "theirs", "mine"} {
		_, err := reconcile(t.Context(), informer.Key{Namespace: "ns", Name: name})
		require.NoError(t, err)
	}
	require.Equal(t, []informer.Key{{Namespace: "ns", Name: "mine"}}, called, "only the member's own object is reconciled")
	require.Empty(t, rec.paths(), "nothing written for an absent object or another member's")
}

// A drained object (its member's label and the drain label) is let go,
// not reconciled: Reconciler acknowledges the drain with a PATCH of that
// object, and never calls the reconcile for it while it drains.
func TestReconcilerAcknowledgesADrainedObjectInsteadOfReconcilingIt(t *testing.T) {
	shard := sharding.Shard{Ring: ring, Member: "a"}
	_, cms := cacheOf(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "draining", ResourceVersion: "12",
		Labels: map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"}}})
	rec := &scriptedServer{}
	var called []informer.Key
	reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps",
		func(_ context.Context, key informer.Key) (workqueue.Result, error) {
			called = append(called, key)
			return workqueue.Result{}, nil
		})

	_, err := reconcile(t.Context(), informer.Key{Namespace: "ns", Name: "draining"})
	require.NoError(t, err)
	require.Empty(t, called, "a draining object is not reconciled")
	require.Equal(t, []string{"/api/v1/namespaces/ns/configmaps/draining"}, rec.paths(), "its drain is acknowledged")
	// The acknowledgement removes both labels, guarded by the version the
	// member's cache saw.
	assert.JSONEq(t, `{"metadata":{"resourceVersion":"12","labels":{"`+shard.Label()+`":null,"`+shard.DrainLabel()+`":null}}}`,
		string(rec.body(0)))
}
