package fakeapiserver_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// A stalled server that recovers serves what it held (Hang, Until); if
// the answer of that late write is lost (AnswerLost), the write lands
// and its client sees it fail. WithFaults checks Hang first and answers
// the write as if AnswerLost were not set.
func TestAHeldWriteWhoseAnswerIsLostLandsUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recovered := make(chan struct{})
		close(recovered)
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault {
				if r.Method == http.MethodPost {
					return fakeapiserver.Fault{Hang: true, Until: recovered, AnswerLost: true}
				}
				return fakeapiserver.Fault{}
			}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		err = client.Post().Namespace("default").Resource("configmaps").MaxRetries(0).
			Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`)).Do(t.Context()).Error()
		require.NoError(t, client.Get().Namespace("default").Resource("configmaps").Name("late").Do(t.Context()).Error(), "the write landed")
		require.Error(t, err, "the held write's answer, AnswerLost, reached its client")
	})
}

// AnswerLost on a watch: the server acts and the connection drops, so
// the client sees an EOF or a reset at once. The fake serves the watch
// into a recorder until the watch ends (timeoutSeconds) or the client
// gives up: the client waits for headers meanwhile, a Hang, not a loss.
func TestAWatchWhoseAnswerIsLostFailsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(),
			func(r *http.Request) fakeapiserver.Fault { return fakeapiserver.Fault{AnswerLost: true} }))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		w, err := client.Get().Namespace("default").Resource("configmaps").Param("watch", "true").
			Param("timeoutSeconds", "300").MaxRetries(0).Watch(ctx)
		if err == nil {
			w.Stop()
		}
		took := time.Since(start)
		require.False(t, apierrors.IsTimeout(err))
		// client-go turns a probable EOF or a timeout into an empty watch
		// and no error: how long it took is what tells a loss from a hang.
		require.Less(t, took, time.Second, "the lost watch answer took %v to fail (%v)", took, err)
	})
}
