package reflector_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// The backoff used against a server that keeps refusing: 200ms doubling
// to 1s, without jitter, and the window over which the requests are
// counted. These tests run in synctest bubbles on the fake API server, so
// the count in the window is exact: one LIST per backoff step.
const (
	refusedInitial = 200 * time.Millisecond
	refusedMax     = time.Second
	refusedWindow  = 4 * time.Second
)

func refusedBackoff(t *reflector.Tuning) {
	t.BackoffInitial, t.BackoffMax, t.BackoffJitter = refusedInitial, refusedMax, -1
}

// A client without the right to list ConfigMaps: every LIST is 403. The
// reflector says so through the error hook, retries at the backoff's
// pace, and syncs as soon as the right is granted, on its next attempt.
// The 403 here is the fake's fault;
// TestTheRealAPIServersForbiddenIsReportedAndTheReflectorSyncsOnceGranted
// checks that a real RBAC refusal reads the same.
func TestForbiddenIsReportedAndRetriedWithBackoffUntilGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cms := newConfigMaps(t, s.mem.Config(), "default")
		cms.create("a")
		var granted atomic.Bool
		s.setFault(func(*http.Request) fakeapiserver.Fault {
			if granted.Load() {
				return fakeapiserver.Fault{}
			}
			return fakeapiserver.Fault{Status: http.StatusForbidden}
		})

		l := cmReflector(t, s.config(), "default", func(o *reflector.Options[*corev1.ConfigMap]) { refusedBackoff(&o.Tuning) })
		time.Sleep(refusedWindow)
		synctest.Wait()
		lists := s.listTimes("configmaps")
		require.NotEmpty(t, lists)
		assert.Equal(t, maxAttempts(refusedWindow, refusedInitial, refusedMax), within(lists, lists[0], refusedWindow),
			"LISTs in %v, all 403: one per backoff step, so the backoff bounds the retries and they go on", refusedWindow)
		reported := l.errs.all()
		assert.Len(t, reported, len(lists), "every refusal is reported")
		for _, err := range reported {
			assert.True(t, apierrors.IsForbidden(err), "a 403 reads as one: %v", err)
		}
		assert.Zero(t, l.store.count("replace"))

		granted.Store(true)
		time.Sleep(refusedMax) // the longest wait the backoff has left
		synctest.Wait()
		assert.Equal(t, cms.state(), l.store.state(), "synced on the next attempt")
	})
}

// A reflector for a custom resource whose CRD does not exist yet: every
// LIST is 404. It says so, retries at the backoff's pace, and syncs once
// the CRD is installed, on its next attempt. On the fake API server,
// whose 404 for a resource it does not serve is held to the real one's
// by fakeapiserver's conformance test.
func TestMissingCustomResourceIsReportedAndRetriedUntilItExists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		admin := newConfigMaps(t, s.mem.Config(), "default").client
		widgets := schema.GroupVersionResource{Group: "listwatch.dev", Version: "v1", Resource: "widgets"}
		lw, err := reflector.NewUnstructuredListerWatcher(s.config(), reflector.Source{Resource: widgets, Namespace: "default"})
		require.NoError(t, err)
		store, errs := newRecorder[*unstructured.Unstructured](), &errorLog{}
		opts := reflector.Options[*unstructured.Unstructured]{ListerWatcher: lw, Store: store, OnError: errs.hook}
		refusedBackoff(&opts.Tuning)
		run(t, must(reflector.New(opts)))

		time.Sleep(refusedWindow)
		synctest.Wait()
		lists := s.listTimes("widgets")
		require.NotEmpty(t, lists)
		assert.Equal(t, maxAttempts(refusedWindow, refusedInitial, refusedMax), within(lists, lists[0], refusedWindow),
			"LISTs in %v, all 404: one per backoff step", refusedWindow)
		reported := errs.all()
		assert.Len(t, reported, len(lists), "every 404 is reported")
		for _, err := range reported {
			assert.True(t, apierrors.IsNotFound(err), "a missing resource reads as NotFound: %v", err)
		}

		require.NoError(t, s.InstallCRD(fakeapiserver.CRD{Group: "listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}))
		post(t, admin, "/apis/listwatch.dev/v1/namespaces/default/widgets",
			map[string]any{"apiVersion": "listwatch.dev/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}})
		time.Sleep(refusedMax) // the longest wait the backoff has left
		synctest.Wait()
		assert.Equal(t, []string{"default/w1"}, slices.Sorted(maps.Keys(store.state())), "the widget arrived on the next attempt")
	})
}

// With no OnError, every failure is a WARN line through slog.Default(),
// worded as a retry, with the reflector's name and the error: a 403 that
// lasts is one line per attempt, each saying the reflector goes on.
func TestWithoutOnErrorEachFailureIsLoggedAtWarnAsARetry(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logged}, nil)))
	t.Cleanup(func() { slog.SetDefault(previous) })

	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC says no"))
	s := &spy[*corev1.ConfigMap]{inner: memlistwatch.New[*corev1.ConfigMap](), onList: func(int, metav1.ListOptions) error { return forbidden }}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{Name: "configmaps", ListerWatcher: s, Store: newRecorder[*corev1.ConfigMap]()})))
	stop := run(t, r)
	eventually(t, func() bool { return len(s.listCalls()) >= 3 }, "the LIST was not retried")
	stop()

	mu.Lock()
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	mu.Unlock()
	require.Len(t, lines, len(s.listCalls()), "one line per failed attempt:\n%s", strings.Join(lines, "\n"))
	for _, line := range lines {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		assert.Equal(t, "WARN", rec["level"])
		assert.Equal(t, "reflector failed; retrying", rec["msg"])
		assert.Equal(t, "configmaps", rec["reflector"])
		assert.Contains(t, rec["err"], "RBAC says no")
	}
}

// lockedWriter serialises writes to w, which the test reads.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
