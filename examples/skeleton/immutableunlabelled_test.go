package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Review r8. The skeleton's Secret, made immutable and unlabelled by
// someone (labels of an immutable Secret can still change), while its
// ConfigMap's data changed. The create answers AlreadyExists, the GET
// reads it, the update is refused 422, and the skeleton deletes it:
// docs/08 says "the delete brings the key back to create a new one with
// the ConfigMap's data". It does not: the Secret was not in the Secret
// cache (no app=demo label), so its delete is no event, the reconcile
// returned nil, and web is left with no Secret at all. The real control
// plane, for the 422.
func TestAnImmutableUnlabelledSecretIsReplacedNotJustDeleted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "b"}})
	web := s.configMap("web")
	yes := true
	frozen := &corev1.Secret{}
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").Body(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", // its app=demo label removed
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(web, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
		Immutable: &yes, Data: map[string][]byte{"k": []byte("a")}}).Do(t.Context()).Into(frozen))

	startRun(t, cp, ns)
	ok := assert.Eventually(t, func() bool { return s.secretData("web")["k"] == "b" }, 15*time.Second, 50*time.Millisecond)
	now := s.secret("web")
	require.NotNil(t, now, "the immutable Secret was deleted and web never got a new one")
	require.True(t, ok, "web's Secret never got its data")
	require.NotEqual(t, frozen.UID, now.UID)
}
