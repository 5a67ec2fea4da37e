package events_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// lateFirstCreate is a Recorder over a fake API server that holds the
// first create of an Event until its client gives up (the Recorder's
// RequestTimeout), and stores it only when land is called: a write
// kube-apiserver finishes after its client went away (etcd slow to
// commit). If landOnFirstPatch, it lands as the first series update is
// answered, before anything else is served. counts returns the
// occurrences each stored Event counts.
func lateFirstCreate(t *testing.T, landOnFirstPatch bool) (r *events.Recorder, land func(), counts func() []int64) {
	t.Helper()
	server := fakeapiserver.New()
	require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
	var mu sync.Mutex
	var first *http.Request
	var body []byte
	var posts, patches int
	land = func() {
		mu.Lock()
		late := first.Clone(context.Background())
		late.Body = io.NopCloser(bytes.NewReader(body))
		mu.Unlock()
		server.ServeHTTP(httptest.NewRecorder(), late)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.Contains(req.URL.Path, "/events") {
			server.ServeHTTP(w, req)
			return
		}
		mu.Lock()
		switch req.Method {
		case http.MethodPost:
			posts++
			if posts == 1 {
				first = req
				body, _ = io.ReadAll(req.Body)
				mu.Unlock()
				<-req.Context().Done() // the client gives up; the write goes on
				return
			}
		case http.MethodPatch:
			patches++
			if patches == 1 && landOnFirstPatch {
				mu.Unlock()
				server.ServeHTTP(w, req)
				land()
				return
			}
		}
		mu.Unlock()
		server.ServeHTTP(w, req)
	})
	r, counts = runBehind(t, server, h)
	return r, land, counts
}

// The first create hangs; a repeat comes; the client gives up after
// RequestTimeout and the Recorder takes the Event as created. The
// repeat's series update finds no Event (404) and the Event is made
// anew, with both occurrences; then the first create, which the server
// was still writing, lands. There is one Event, counting two: the
// remade one must not be a second Event beside it.
func TestACreateThatLandsAfterItsClientGaveUpIsNotCreatedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, land, counts := lateFirstCreate(t, false)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Second)
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute) // the create times out; the update 404s; the Event is made anew
		synctest.Wait()
		require.Equal(t, []int64{2}, counts(), "%+v", r.Stats())
		land()
		assert.Equal(t, []int64{2}, counts(), "the late create made a second Event, its occurrence counted twice: %+v", r.Stats())
	})
}

// The same, but the first create lands just before the Event is made
// anew: the remade create meets it (409) and takes it for its own. The
// server's Event then counts both occurrences, not the one the late
// create carried.
func TestACreateThatLandsJustBeforeItIsMadeAnewStillCountsEveryOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, counts := lateFirstCreate(t, true)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Second)
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []int64{2}, counts(), "two occurrences: %+v", r.Stats())
	})
}

// runBehind runs a Recorder, until the test ends, whose requests h
// serves (passing them on to server, or holding them), and returns it
// with counts: the occurrences each Event server stores counts.
func runBehind(t *testing.T, server *fakeapiserver.Server, h http.Handler) (r *events.Recorder, counts func() []int64) {
	t.Helper()
	mem := fakeapiserver.ServeInMemory(h)
	t.Cleanup(mem.Close)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	r, err := events.New(mem.Config(), events.Options{Controller: "example.com/late", Instance: "late-0", Scheme: scheme})
	require.NoError(t, err)
	ctx := t.Context()
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { <-done })
	counts = func() []int64 {
		var out []int64
		for _, ev := range server.Objects(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}) {
			n := int64(1)
			if s, ok := ev.Object["series"].(map[string]any); ok {
				n = s["count"].(int64)
			}
			out = append(out, n)
		}
		return out
	}
	return r, counts
}
