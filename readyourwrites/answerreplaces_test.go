package readyourwrites_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/testenv"
)

// Write leaves in out the object the API server answered, and nothing of
// what out held before: a label a mutating webhook removed is gone from
// out too, as from the object a typed client-go call returns. Decoded
// over the request instead, out would keep the label the server dropped,
// and the reconcile would read, in its own write's answer, an object the
// server does not have.
func TestWriteLeavesInOutTheAnswerAloneNotTheRequestBeneathIt(t *testing.T) {
	server := fakeapiserver.New()
	mem := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			cm := &corev1.ConfigMap{}
			if json.Unmarshal(body, cm) == nil && cm.Labels["drop-me"] != "" {
				delete(cm.Labels, "drop-me") // a mutating webhook
				body, _ = json.Marshal(cm)
				r.ContentLength = int64(len(body))
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		server.ServeHTTP(w, r)
	}))
	t.Cleanup(mem.Close)
	cfg := mem.Config()
	cfg.ContentType = "application/json"
	core := must(testenv.CoreV1Client(cfg))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(context.Background()).Error())
	inf, _ := newCache(t)
	run(t, inf)
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "answer"}))
	t.Cleanup(guard.Close)
	cms := readyourwrites.Track(guard, inf)

	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child",
		Labels: map[string]string{"drop-me": "yes", "keep": "yes"}}}
	require.NoError(t, cms.Write(context.Background(), owner, core.Post().Namespace("demo").Resource("configmaps").Body(child), child))
	assert.Equal(t, map[string]string{"keep": "yes"}, child.Labels, "out kept a label the server's answer does not have")
	assert.NotEmpty(t, child.ResourceVersion)
}
