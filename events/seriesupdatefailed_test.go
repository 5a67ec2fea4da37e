package events_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// The Event is created; occurrence 2 is due and its series PATCH hangs
// until the RequestTimeout; occurrence 3 is recorded while that write is
// in flight. The failed write is not retried as such, but occurrence 3
// was in no write: once the failed write settles, the series is queued
// again, and its next write carries every occurrence so far. (Found by a
// hunt: occurrence 3 was never written unless a fourth came, and past
// the series window it was swept and lost, though Eventf accepted it.)
func TestAnOccurrenceRecordedWhileASeriesUpdateTimesOutIsStillWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := fakeapiserver.New()
		require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
		var patches atomic.Int32
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(server, func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/events") && patches.Add(1) == 1 {
				return fakeapiserver.Fault{Hang: true} // the first series update times out
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(mem.Close)
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		r, err := events.New(mem.Config(), events.Options{Controller: "example.com/h2", Instance: "h2-0", Scheme: scheme, RequestTimeout: 5 * time.Second})
		require.NoError(t, err)
		ctx := t.Context()
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		t.Cleanup(func() { <-done })

		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists")) // 1: created
		synctest.Wait()
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists")) // 2
		time.Sleep(11 * time.Second)                                                                     // the series update of count 2 is sent, and hangs
		synctest.Wait()
		require.Equal(t, int32(1), patches.Load(), "the series update is in flight")
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists")) // 3, during it
		time.Sleep(3 * time.Minute)                                                                      // the update times out; plenty of time for a next write
		synctest.Wait()

		objs := server.Objects(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"})
		require.Len(t, objs, 1)
		count, _, _ := unstructured.NestedInt64(objs[0].Object, "series", "count")
		assert.Equal(t, int64(3), count,
			"occurrence 3, recorded while the series update was in flight, was never written (patches sent: %d, stats %+v)", patches.Load(), r.Stats())
	})
}
