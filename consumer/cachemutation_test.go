package consumer_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/consumer"
	"github.com/listwatch/informer/fakeapiserver"
)

// stampingWebhook stands for a mutating admission webhook: it adds the
// data key "stamp" to every mirror written, and keeps what each mirror
// write asked for before that.
type stampingWebhook struct {
	next http.Handler
	mu   sync.Mutex
	sent []map[string]string // guarded by mu: the data of each mirror write, as sent
}

func (w *stampingWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, "/configmaps") {
		body, _ := io.ReadAll(r.Body)
		cm := &corev1.ConfigMap{}
		if json.Unmarshal(body, cm) == nil && cm.Labels[consumer.MirrorOfLabel] != "" {
			w.mu.Lock()
			w.sent = append(w.sent, maps.Clone(cm.Data))
			w.mu.Unlock()
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data["stamp"] = "webhook"
			body, _ = json.Marshal(cm)
			r.ContentLength = int64(len(body))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	w.next.ServeHTTP(rw, r)
}

// The mirror's data is a copy of its source's, never the source's map
// itself: Write decodes the API server's answer into the object it
// sent, so an answer that differs from the request (here, a mutating
// webhook's stamp) would be written into the cached source, and every
// later reconcile would read a source the server does not hold. The
// mirror made again after a hand delete shows it: it must ask for the
// source's data, and nothing else.
func TestTheMirrorControllerNeverWritesTheAnswerIntoItsCachedSource(t *testing.T) {
	webhook := &stampingWebhook{next: fakeapiserver.New()}
	api, cfg, ctx := onFake(t, webhook)
	_, err := api.create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{consumer.SourceLabel: "yes"}},
		Data:       map[string]string{"color": "blue"},
	})
	require.NoError(t, err)

	runMirror(t, ctx, cfg, api)

	var first *corev1.ConfigMap
	require.Eventually(t, func() bool { first, err = api.get(ctx, "settings-mirror"); return err == nil }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, api.delete(ctx, "settings-mirror"))
	require.Eventually(t, func() bool {
		again, err := api.get(ctx, "settings-mirror")
		return err == nil && again.UID != first.UID
	}, 30*time.Second, 10*time.Millisecond, "the mirror deleted by hand is made again")

	webhook.mu.Lock()
	defer webhook.mu.Unlock()
	for i, data := range webhook.sent {
		assert.Equal(t, map[string]string{"color": "blue"}, data, "mirror write %d asked for other data than the source's", i+1)
	}
}
