package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Review r8. web controls its Secret and a keeper ConfigMap, still
// there, also owns it; someone made it immutable, and web's data
// changed. docs/08 (this round): "A Secret with other owners goes only
// once every one of them is gone too, as the garbage collector decides",
// and 04-controller, the same round, releases rather than deletes a
// child a live owner still has, because deleting "would take it from an
// owner that still wants it, which the garbage collector never does".
// The skeleton's replace deletes that Secret and makes a new one with
// web's reference alone: keeper's ownership is lost, though the update
// path keeps other owners' references. Passing: the replacement keeps
// the references of the owners other than web (or the Secret is not
// deleted from under keeper). The real control plane, for the 422.
func TestAnImmutableSecretAnotherLiveOwnerHasKeepsThatOwnerWhenReplaced(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keeper"}})
	keeper := s.configMap("keeper")
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "b"}})
	web := s.configMap("web")
	yes := true
	keeperRef := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: keeper.UID}
	frozen := &corev1.Secret{}
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").Body(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(web, corev1.SchemeGroupVersion.WithKind("ConfigMap")), keeperRef}},
		Immutable: &yes, Data: map[string][]byte{"k": []byte("a")}}).Do(t.Context()).Into(frozen))

	startRun(t, cp, ns)
	s.eventually("web's Secret has web's data", func() bool { return s.secretData("web")["k"] == "b" })
	now := s.secret("web")
	assert.Equal(t, web.UID, controllerUID(now))
	require.Contains(t, now.OwnerReferences, keeperRef, "the Secret keeper, still there, owns was replaced by one keeper does not own (UID %s, was %s)", now.UID, frozen.UID)
}
