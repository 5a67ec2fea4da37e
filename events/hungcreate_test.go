package events_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// hangingRecorder is a Recorder writing to a fake API server that never
// answers the creates of Events whose body hangs says so, and answers
// every other request. The test must run in a synctest bubble.
func hangingRecorder(t *testing.T, hangs func(body []byte) bool, opts events.Options) *events.Recorder {
	t.Helper()
	server := fakeapiserver.New()
	require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(server, func(r *http.Request) fakeapiserver.Fault {
		if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/events") {
			return fakeapiserver.Fault{}
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		return fakeapiserver.Fault{Hang: hangs(body)}
	}))
	t.Cleanup(mem.Close)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	opts.Controller, opts.Instance, opts.Scheme = "example.com/hung", "hung-0", scheme
	r, err := events.New(mem.Config(), opts)
	require.NoError(t, err)
	return r
}

// TestRunReturnsAtOnceWhenItsContextEndsWhileACreateHangs: a create the
// server never answers holds Run inside the request, and the end of
// Run's ctx ends that request, through the REST client: Run does not
// stall. (A review suspected it would; this test refutes it.)
func TestRunReturnsAtOnceWhenItsContextEndsWhileACreateHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hangingRecorder(t, func([]byte) bool { return true }, events.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute) // the create hangs
		synctest.Wait()
		cancel()
		start := time.Now()
		<-done
		assert.Zero(t, time.Since(start), "Run returned only after its ctx had ended")
		assert.Zero(t, r.Stats().Created)
	})
}

// A create the server never answers, while Run's ctx lives, must not
// hold every later Event back: each write is bounded by
// Options.RequestTimeout, and one that timed out is taken as may have
// landed, as a cut connection is. Here the first Event's create hangs;
// the second Event, about another object, is created a RequestTimeout
// later.
func TestAHungCreateHoldsTheNextEventBackOnlyForTheRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hangingRecorder(t, func(body []byte) bool { return bytes.Contains(body, []byte("first")) },
			events.Options{RequestTimeout: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		first := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "default", UID: "u-1"}}
		second := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "second", Namespace: "default", UID: "u-2"}}
		require.NoError(t, r.Eventf(first, events.Warning, "SecretNotOurs", "Create", "secret first exists"))
		synctest.Wait() // the first create is sent, and hangs
		require.NoError(t, r.Eventf(second, events.Warning, "SecretNotOurs", "Create", "secret second exists"))
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		assert.EqualValues(t, 1, r.Stats().Created, "the second Event was held back by the first's hung create")
	})
}
