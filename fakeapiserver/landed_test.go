package fakeapiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// A write etcd committed too slowly (Landed, with Status 500 and a
// Retry-After): it lands, its client sees the 500, and client-go, which
// sends a write answered 5xx with a Retry-After again, meets its own
// write: the retry of the create answers AlreadyExists.
func TestALandedWriteAnsweredServerTimeoutIsMetByItsOwnRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := true
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault {
				if r.Method == http.MethodPost && first {
					first = false
					return fakeapiserver.Fault{Status: http.StatusInternalServerError, RetryAfter: 1, Landed: true}
				}
				return fakeapiserver.Fault{}
			}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slow"}}`)

		err = client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).Body(body).Do(t.Context()).Error()
		require.True(t, strings.HasPrefix(statusOf(err), "500 "), "the client sees the 500: %v", err)
		require.NoError(t, client.Get().Namespace("default").Resource("configmaps").Name("slow").Do(t.Context()).Error(), "the write landed")

		first = true
		err = client.Post().Namespace("default").Resource("configmaps").Body(body).Do(t.Context()).Error() // client-go's retries
		require.True(t, apierrors.IsAlreadyExists(err), "client-go's retry met its own write: %v", err)
	})
}
