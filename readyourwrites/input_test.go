package readyourwrites_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
)

// Wrote is given what an API server answered. Nil, or an object with no
// resourceVersion, is no answer: an error naming what is missing, not a
// panic, and nothing recorded.
func TestWroteWithoutAnAnswerIsAnErrorAndRecordsNothing(t *testing.T) {
	inf, _ := newCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{}))
	cms := readyourwrites.Track(guard, inf)

	var typedNil *corev1.ConfigMap
	require.ErrorContains(t, cms.Wrote(owner, typedNil), "the answer is nil")
	require.ErrorContains(t, cms.Wrote(owner, nil), "the answer is nil")
	require.ErrorContains(t, cms.Wrote(owner, configMap("unsent")), "demo/unsent has no resourceVersion")
	require.Zero(t, guard.Pending())
	held, _, _ := guard.Hold(owner)
	require.False(t, held)
}

// Deleted's terminating object is optional: a typed nil is no object, as
// nil is, and the delete is seen once the object is gone, not while the
// cache holds it marked for deletion (finalizers).
func TestDeletedWithATypedNilTerminatingObjectWaitsForAbsence(t *testing.T) {
	inf, api := newCache(t)
	marked := configMap("child")
	marked.Finalizers, marked.DeletionTimestamp = []string{"example.com/cleanup"}, &metav1.Time{}
	created := must(api.Create(marked))
	run(t, inf)
	require.NoError(t, inf.WaitFor(t.Context(), api.ResourceVersion()))
	guard := must(readyourwrites.New(readyourwrites.Options{}))
	var typedNil *corev1.ConfigMap
	readyourwrites.Track(guard, inf).Deleted(owner, informer.KeyFor(created), created.UID, typedNil)
	held, _, _ := guard.Hold(owner)
	require.True(t, held, "the object is still in the cache")

	require.NoError(t, api.Delete(informer.KeyFor(created)))
	require.NoError(t, inf.WaitFor(t.Context(), api.ResourceVersion()))
	held, _, _ = guard.Hold(owner)
	require.False(t, held, "the object is gone from the cache")
}

// A write the server accepted but whose answer cannot be decoded is not
// a failed write: Write says so with ErrAnswerUnreadable, so that the
// caller does not send it again (a generateName create would make a
// second object).
func TestAWriteWhoseAnswerCannotBeDecodedSaysItSucceeded(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":`)) // cut short
	}))
	defer server.Close()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	client := must(rest.RESTClientFor(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
	}, APIPath: "/api"}))

	inf, _ := newCache(t)
	guard := must(readyourwrites.New(readyourwrites.Options{}))
	err := readyourwrites.Track(guard, inf).Write(t.Context(), owner,
		client.Post().Namespace("demo").Resource("configmaps").Body(configMap("child")), &corev1.ConfigMap{})
	require.ErrorIs(t, err, readyourwrites.ErrAnswerUnreadable)
	require.Zero(t, guard.Pending())
}
