package main

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// Found by a review. The Secret of an earlier web, which someone unlabelled (so
// the Secret cache does not hold it), and a labelled web made anew. The
// create answers AlreadyExists, the GET reads the Secret, ownerGone says
// its owners are all gone, and the skeleton deletes it. docs/08: "The
// delete brings the key back, and a ConfigMap made anew gets a Secret of
// its own". It does not here: the deleted Secret was never in the
// Secret cache, so its delete is no event, the reconcile returned nil,
// and no informer resyncs: web never gets a Secret.
func TestAnUnlabelledSecretOfAnEarlierConfigMapIsDeletedAndTheNewOneGetsItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		yes := true
		web := &corev1.ConfigMap{}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}},
			Data:       map[string]string{"k": "new"}}).Do(t.Context()).Into(web))
		left := &corev1.Secret{}
		require.NoError(t, client.Post().Namespace("default").Resource("secrets").Body(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "web", // no app=demo: someone removed it
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web", Controller: &yes}}},
			Data: map[string][]byte{"k": []byte("old")}}).Do(t.Context()).Into(left))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- control(ctx, mem.Config(), "default", nil) }()
		time.Sleep(time.Minute) // simulated: many reconciles' worth
		got := &corev1.Secret{}
		err = client.Get().Namespace("default").Resource("secrets").Name("web").Do(context.Background()).Into(got)
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, err, "the earlier web's Secret was deleted and the new web never got one")
		require.NotEqual(t, left.UID, got.UID, "the earlier web's Secret was kept")
		require.Equal(t, web.UID, controllerUID(got), "web's Secret is controlled by web")
		require.Equal(t, "new", string(got.Data["k"]))
	})
}
