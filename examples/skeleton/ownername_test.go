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

// Found by a review. An earlier web's Secret whose second owner reference names
// a v1 ConfigMap "keeper/x": kube-apiserver checks only that an owner
// reference's name is not empty, and no ConfigMap can have that name,
// so no owner of the Secret exists. ownerGone's GET of it fails in the
// client ("invalid resource name"), which is neither an answer nor a
// NotFound: the key is retried with backoff for ever and the Secret is
// never deleted. Passing: the Secret goes, as a garbage collector's
// lookup (a 404) would have it.
func TestASecretWhoseOtherOwnerNameNoConfigMapCanHaveIsDeleted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	log := logTo(t)
	yes := true
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").Body(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web", Controller: &yes},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper/x", UID: "no-such-keeper"},
			}},
		Data: map[string][]byte{"k": []byte("old")}}).Do(t.Context()).Error())

	startRun(t, cp, ns)
	ok := assert.Eventually(t, func() bool { return s.secret("web") == nil }, 10*time.Second, 50*time.Millisecond)
	require.True(t, ok, "a Secret none of whose owners can exist was never deleted; log: %s", log.String())
}
