package readyourwrites_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/readyourwrites"
)

// A write the server accepted, whose answer decodes but names no
// resourceVersion (a server that is not kube-apiserver: an aggregated
// API server's, a proxy's rewrite), cannot be recorded: there is no
// version to wait for. It is still no failed write: Write says so with
// ErrAnswerUnreadable, as for an answer it cannot decode, so that the
// caller does not send it again (a generateName create would make a
// second object), and nothing is recorded.
func TestAWriteWhoseAnswerHasNoResourceVersionSaysItSucceeded(t *testing.T) {
	var posts atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"child-x1","namespace":"demo","uid":"u1"}}`))
	}))
	defer server.Close()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	client := must(rest.RESTClientFor(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion(),
	}, APIPath: "/api"}))

	for _, opaque := range []bool{false, true} {
		inf, _ := newCache(t)
		run(t, inf)
		guard := must(readyourwrites.New(readyourwrites.Options{OpaqueResourceVersions: opaque}))
		t.Cleanup(guard.Close)
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", GenerateName: "child-"}}
		out := &corev1.ConfigMap{}
		err := readyourwrites.Track(guard, inf).Write(t.Context(), owner,
			client.Post().Namespace("demo").Resource("configmaps").Body(child), out)
		require.ErrorIs(t, err, readyourwrites.ErrAnswerUnreadable,
			"the create was stored, yet Write reports a plain failure (%v): its retry makes a second child", err)
		require.Equal(t, "child-x1", out.Name, "out holds the answer")
		require.Zero(t, guard.Pending(), "nothing is recorded")
		held, _, _ := guard.Hold(owner)
		require.False(t, held)
	}
	require.EqualValues(t, 2, posts.Load())
}
