package reflector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// okLW lists one ConfigMap at rv 5, and answers each Watch with the next
// scripted fake watcher (then one that stays open and empty).
type okLW struct {
	mu      sync.Mutex
	watches []func() watch.Interface
	opened  []string // the resourceVersion of each WATCH
	lists   atomic.Int32
}

func (s *okLW) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	s.lists.Add(1)
	return []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "5"}}},
		metav1.ListMeta{ResourceVersion: "5"}, nil
}

func (s *okLW) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.opened)
	s.opened = append(s.opened, opts.ResourceVersion)
	if n < len(s.watches) {
		return s.watches[n](), nil
	}
	return watch.NewFakeWithChanSize(1, false), nil
}

// clientDecodingError is exactly the event client-go's StreamWatcher sends
// when reading the watch body fails with an error that is not an EOF or
// a timeout: an HTTP/2 connection whose health-check ping failed
// ("http2: client connection lost"), a stream reset by a proxy
// ("stream error: ... INTERNAL_ERROR"). No object, of any kind, was
// involved.
func clientDecodingError(cause string) *metav1.Status {
	return apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding").
		AsObject(fmt.Errorf("unable to decode an event from the watch stream: %s", cause)).(*metav1.Status)
}

// A watch cut by the transport is no sign of another kind: with Served, it
// is watched again from its resourceVersion, as without, not relisted.
func TestAWatchCutByTheTransportIsWatchedAgainFromItsResourceVersionWithServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &okLW{watches: []func() watch.Interface{func() watch.Interface {
			w := watch.NewFakeWithChanSize(4, false)
			w.Modify(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "6"}})
			w.Error(clientDecodingError("http2: client connection lost"))
			return w
		}}}
		var asked atomic.Int32
		served := func(context.Context) (reflector.Serving, error) {
			asked.Add(1)
			return reflector.Serving{Served: true}, nil
		}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		runFor(t, must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook, Served: served}))), time.Minute)
		lw.mu.Lock()
		defer lw.mu.Unlock()
		require.Equal(t, int32(1), lw.lists.Load(),
			"a transport cut made a LIST (watches opened at %q, Served asked %d times, errors: %v)", lw.opened, asked.Load(), errs.all())
		require.Equal(t, []string{"5", "6"}, lw.opened)
	})
}

// One initial event whose object has no name (a key the store cannot
// make) was reported and skipped; with Served it must not keep the
// streaming list from ever finishing.
func TestAStreamedListWithOneNamelessObjectStillSyncsWithServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{}
		for range 1000 {
			lw.watches = append(lw.watches, func(metav1.ListOptions) watch.Interface {
				w := watch.NewFakeWithChanSize(4, false)
				w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}})
				w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", ResourceVersion: "2"}}) // no name
				w.Action(watch.Bookmark, endBookmark("2"))
				return w
			})
		}
		var asked atomic.Int32
		served := func(context.Context) (reflector.Serving, error) {
			asked.Add(1)
			return reflector.Serving{Served: true}, nil
		}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		opts := fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook, Served: served})
		opts.StreamingList = true
		runFor(t, must(reflector.New(opts)), time.Minute)
		lw.mu.Lock()
		opened := len(lw.opened)
		lw.mu.Unlock()
		require.Equal(t, 1, store.count("replace"),
			"the streaming list never finished: %d streams opened, Served asked %d times, last error: %v", opened, asked.Load(), errs.all()[len(errs.all())-1])
	})
}

// The same through the real client: an HTTP/2 stream reset by the server
// mid-watch (INTERNAL_ERROR, as a handler that aborts or a proxy sends)
// reaches the reflector as client-go's ClientWatchDecoding ERROR event.
func TestAnHTTP2StreamResetMidWatchIsWatchedAgainNotRelistedWithServed(t *testing.T) {
	var lists, watches atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Get("watch") != "true" {
			lists.Add(1)
			fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}]}`)
			return
		}
		if watches.Add(1) > 1 {
			<-req.Context().Done() // the second watch stays open
			return
		}
		fmt.Fprint(w, `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"6"}}}`+"\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM INTERNAL_ERROR
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw := must(reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns"}))
	served := func(context.Context) (reflector.Serving, error) { return reflector.Serving{Served: true}, nil }
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook, Served: served})))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	eventually(t, func() bool { return watches.Load() >= 2 }, "a second watch")
	cancel()
	<-done
	require.Equal(t, int32(1), lists.Load(), "a stream reset made a LIST; errors: %v", errs.all())
}
