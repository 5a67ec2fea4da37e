package expectations_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/expectations"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// Refused judges one answer, so the create it judges must be sent once.
// client-go's rest client sends a POST again by itself when a 5xx comes
// with a Retry-After, as kube-apiserver answers a write etcd committed
// too slowly, and returns only the last attempt's error: here the retry
// meets the ResourceQuota the first attempt filled (403), and the object
// the first attempt stored is judged refused. Sent with MaxRetries(0),
// as the package's pattern sends it, the same create answers the 500:
// not refused, and its add event lowers the expectation. (Found by a
// review.)
func TestRefusedJudgesACreateSentOnceNotOneTheClientRetried(t *testing.T) {
	for _, c := range []struct {
		name     string
		send     func(*rest.Request) *rest.Request
		attempts int
		refused  bool
	}{
		{"retried by the client", func(r *rest.Request) *rest.Request { return r }, 2, true},
		{"sent once, as the pattern says", func(r *rest.Request) *rest.Request { return r.MaxRetries(0) }, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			attempt, srv := 0, fakeapiserver.New()
			mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
				if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/demo/configmaps" {
					return fakeapiserver.Fault{}
				}
				if attempt++; attempt == 1 { // stored, answered 500 with a Retry-After
					return fakeapiserver.Fault{Status: http.StatusInternalServerError, RetryAfter: 1, Landed: true}
				}
				return fakeapiserver.Fault{Status: http.StatusForbidden} // the quota the first attempt filled
			}))
			t.Cleanup(mem.Close)
			client, err := testenv.CoreV1Client(mem.Config())
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, client.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}).Do(ctx).Error())

			child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "demo"}}
			err = c.send(client.Post().Namespace("demo").Resource("configmaps").Body(child)).Do(ctx).Error()
			require.Error(t, err)
			require.Len(t, srv.Objects(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}), 1, "the first attempt was stored")
			assert.Equal(t, c.attempts, attempt)
			assert.Equal(t, c.refused, expectations.Refused(err), "err: %v", err)
		})
	}
}
