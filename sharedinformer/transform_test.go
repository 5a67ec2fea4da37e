package sharedinformer_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

type memLW = memlistwatch.ListerWatcher[*corev1.ConfigMap]

// rejecting sets up an informer whose transform rejects every ConfigMap
// labelled reject=yes, with "a" cached and its handler's initial add seen.
// It returns what OnError received and what the trace said.
func rejecting(t *testing.T) (*cmInformer, *memLW, *recorder, *errorsSeen, *traceSeen) {
	t.Helper()
	errs, trace := &errorsSeen{}, &traceSeen{}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{OnError: errs.add, Trace: trace.add,
		Reflector: reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}})
	require.NoError(t, inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm.Labels["reject"] == "yes" {
			return nil, errors.New("labelled reject=yes")
		}
		return cm, nil
	}))
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	rec.eventually(t, "add a (initial)")
	return inf, lw, rec, errs, trace
}

// rejectA updates "a" on the server to a version the transform rejects.
func rejectA(t *testing.T, lw *memLW) *corev1.ConfigMap {
	t.Helper()
	bad := configMap("a")
	bad.Labels = map[string]string{"reject": "yes"}
	out, err := lw.Update(bad)
	require.NoError(t, err)
	return out
}

// assertRejectionReported checks the one rule's second half: OnError and
// the trace name the key and resourceVersion of the rejected object.
func assertRejectionReported(t *testing.T, errs *errorsSeen, trace *traceSeen, rejected *corev1.ConfigMap) {
	t.Helper()
	var te *sharedinformer.TransformError
	require.Eventually(t, func() bool {
		for _, err := range errs.all() {
			if errors.As(err, &te) {
				return true
			}
		}
		return false
	}, hangGuard, 5*time.Millisecond, "the rejection reaches OnError")
	assert.Equal(t, informer.Key{Namespace: "default", Name: "a"}, te.Key)
	assert.Equal(t, rejected.ResourceVersion, te.ResourceVersion)
	events := trace.of(sharedinformer.KindTransformRejected)
	require.Len(t, events, 1)
	assert.Equal(t, "default/a", events[0].Key)
	assert.Equal(t, rejected.ResourceVersion, events[0].ResourceVersion)
}

func TestATransformRejectionOnAWatchEventKeepsTheCachedVersionAndIsReported(t *testing.T) {
	inf, lw, rec, errs, trace := rejecting(t)
	cached, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)

	rejected := rejectA(t, lw)
	assertRejectionReported(t, errs, trace, rejected)
	now, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Equal(t, cached.ResourceVersion, now.ResourceVersion, "the cache keeps the version it accepted")
	assert.Equal(t, []string{"add a (initial)"}, rec.snapshot(), "no handler hears of the rejected version")
}

func TestATransformRejectionOnARelistIsNeverADelete(t *testing.T) {
	inf, lw, rec, errs, trace := rejecting(t)
	lw.Disconnect()
	rejected := rejectA(t, lw) // only the relist will see it
	lw.Compact()
	lw.Reconnect()
	assertRejectionReported(t, errs, trace, rejected) // by the relist
	_, err := lw.Create(configMap("b"))
	require.NoError(t, err)
	// Handlers hear of changes in order: b's add comes from the watch after
	// the relist, so a tombstone for a, queued by the relist, would come
	// before it.
	require.Eventually(t, func() bool { return slices.Contains(rec.snapshot(), "add b") }, hangGuard, 5*time.Millisecond)

	assert.NotContains(t, rec.snapshot(), "delete a (final state unknown)", "the server still has a: no delete")
	_, err = inf.Lister().Namespace("default").Get("a")
	assert.NoError(t, err, "the cache keeps the version of a it accepted")
}

// errorsSeen collects what OnError receives.
type errorsSeen struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorsSeen) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errorsSeen) all() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// traceSeen collects trace events.
type traceSeen struct {
	mu     sync.Mutex
	events []informer.TraceEvent
}

func (s *traceSeen) add(e informer.TraceEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *traceSeen) of(kind string) []informer.TraceEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []informer.TraceEvent
	for _, e := range s.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
