package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/testenv"
)

// Found by a review. As TestATerminatingSecretOfAnEarlierConfigMapIsNotDeletedAgainInALoop,
// but the earlier web's Secret is unlabelled, so never in the Secret
// cache: the reconcile reads it by GET and deletes it (terminating: a
// finalizer holds it). Its delete is no event, as a labelled Secret's
// is, so only the reconcile's own retry brings the key back. An error
// retried with backoff (the first fix) doubles its wait from 5 ms while
// the finalizer holds: once it goes, web waits about as long again (up
// to the backoff's 1000 s); here a hold of 11 s left web with no Secret
// for about 9 s more. The skeleton looks again every second instead.
// Passing: web gets its own Secret within 6 s of the earlier one going.
func TestANewConfigMapGetsItsSecretSoonAfterAnUnlabelledTerminatingOneGoes(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "new"}})
	web := s.configMap("web")
	yes := true
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").Body(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Finalizers: []string{"example.com/hold"}, // no app=demo label
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web", Controller: &yes}}},
		Data: map[string][]byte{"k": []byte("old")}}).Do(t.Context()).Error())
	release := func() {
		_ = client.Patch(types.MergePatchType).Namespace(ns).Resource("secrets").Name("web").
			Body([]byte(`{"metadata":{"finalizers":null}}`)).Do(context.Background()).Error()
	}
	t.Cleanup(release)

	startRun(t, cp, ns)
	s.eventually("the earlier web's Secret is terminating", func() bool {
		secret := s.secret("web")
		return secret != nil && secret.DeletionTimestamp != nil
	})
	time.Sleep(11 * time.Second) // a finalizer that takes its time
	release()
	s.eventually("the earlier web's Secret is gone", func() bool {
		secret := s.secret("web")
		return secret == nil || secret.UID != "" && controllerUID(secret) == web.UID
	})
	gone := time.Now()
	require.Eventually(t, func() bool {
		secret := s.secret("web")
		return secret != nil && controllerUID(secret) == web.UID && string(secret.Data["k"]) == "new"
	}, 6*time.Second, 50*time.Millisecond,
		"web had no Secret for 6 s after the earlier, unlabelled one went: its key waits out the backoff its 11 s of terminating built up")
	t.Logf("web's Secret came %v after the earlier one went", time.Since(gone))
}
