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

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// lateCreates is a Recorder over a fake API server that holds the first
// `held` creates until their client gives up (RequestTimeout) and stores
// each only when land(i) is called (i from 0): writes kube-apiserver
// finishes after their client went away, etcd slow to commit. Later
// creates and every series update are served at once. counts returns
// the occurrences each stored Event counts; posts, the creates sent.
func lateCreates(t *testing.T, held int) (r *events.Recorder, land func(i int), counts func() []int64, posts func() int) {
	t.Helper()
	server := fakeapiserver.New()
	require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
	var mu sync.Mutex
	var reqs []*http.Request
	var bodies [][]byte
	land = func(i int) {
		mu.Lock()
		late := reqs[i].Clone(context.Background())
		late.Body = io.NopCloser(bytes.NewReader(bodies[i]))
		mu.Unlock()
		server.ServeHTTP(httptest.NewRecorder(), late)
	}
	var sent int
	posts = func() int {
		mu.Lock()
		defer mu.Unlock()
		return sent
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/events") {
			mu.Lock()
			sent++
			if len(reqs) < held {
				body, _ := io.ReadAll(req.Body)
				reqs, bodies = append(reqs, req), append(bodies, body)
				mu.Unlock()
				<-req.Context().Done() // the client gives up; the write goes on
				return
			}
			mu.Unlock()
		}
		server.ServeHTTP(w, req)
	})
	r, counts = runBehind(t, server, h)
	return r, land, counts, posts
}

// The first create hangs and is taken as created; the repeat's series
// update finds no Event, so the Event is made anew under its own name,
// counting both; that create hangs too, and is taken as created. Then
// the server finishes both, in the order they came: the first lands,
// counting one, and the remade one meets it (409), its client long
// gone. Two occurrences, and the one Event must count both.
func TestARemadeCreateThatLandsAfterTheFirstStillCountsEveryOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, land, counts, _ := lateCreates(t, 2)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Second)
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(2 * time.Minute) // both creates time out; the update between them 404s
		synctest.Wait()
		land(0)
		land(1)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []int64{2}, counts(), "the remade create met the first, late, and its occurrence is lost: %+v", r.Stats())
		assert.Equal(t, int64(1), r.Stats().Created, "%+v", r.Stats())
	})
}

// The same, but the server finishes no create while the Recorder is
// watching: each remade create goes unanswered and each series update
// finds nothing. The Recorder makes the Event anew only while the series
// is within its window (six minutes after its last occurrence), then
// stops: a create the API server never answers is not retried forever.
func TestARemadeCreateIsMadeAgainOnlyWithinItsSeriesWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, _, posts := lateCreates(t, 1000)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Second)
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		after := posts()
		assert.LessOrEqual(t, after, 15, "one create every RequestTimeout, for six minutes: %+v", r.Stats())
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, after, posts(), "the Recorder went on making the Event anew past its series window: %+v", r.Stats())
	})
}
