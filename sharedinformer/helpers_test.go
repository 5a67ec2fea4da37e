package sharedinformer_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

type cmInformer = sharedinformer.Informer[*corev1.ConfigMap]

// hangGuard bounds every wait for something that must happen: a guard
// against a hang, not a timing. A short bound would be an assertion about
// the machine's speed, which a loaded one (two cores, -race, -p 4) breaks;
// what is asserted is that it happens, and its value.
const hangGuard = time.Minute

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"v": "1"}}
}

// runInformer runs inf until the test ends and waits for Run to return.
func runInformer[T informer.Object](t *testing.T, inf *sharedinformer.Informer[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(hangGuard):
			t.Errorf("Run did not return %v after its context ended", hangGuard)
		}
	})
}

// newMemInformer returns an informer over a fresh in-memory collection.
func newMemInformer(t *testing.T, opts sharedinformer.Options[*corev1.ConfigMap]) (*cmInformer, *memlistwatch.ListerWatcher[*corev1.ConfigMap]) {
	t.Helper()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	opts.ListerWatcher = lw
	inf, err := sharedinformer.New(opts)
	require.NoError(t, err)
	return inf, lw
}

// waitSynced waits for syncers, failing the test after hangGuard.
func waitSynced(t *testing.T, syncers ...sharedinformer.Syncer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, sharedinformer.WaitForCacheSync(ctx, syncers...), "not synced within %v", hangGuard)
}

// recorder is a Handler that records every call as a line.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) OnAdd(obj *corev1.ConfigMap, initial bool) {
	if initial {
		r.record("add " + obj.Name + " (initial)")
	} else {
		r.record("add " + obj.Name)
	}
}

func (r *recorder) OnUpdate(old, obj *corev1.ConfigMap) {
	if old == obj {
		r.record("resync " + obj.Name)
	} else {
		r.record("update " + obj.Name)
	}
}

func (r *recorder) OnDelete(obj *corev1.ConfigMap, unknown bool) {
	if unknown {
		r.record("delete " + obj.Name + " (final state unknown)")
	} else {
		r.record("delete " + obj.Name)
	}
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// eventually waits until r has recorded want exactly.
func (r *recorder) eventually(t *testing.T, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Equal(r.snapshot(), want) }, hangGuard, 5*time.Millisecond,
		"want %q", want)
}

// stepResync moves clock, an informer's, on by one resync period once
// its reflector has armed the next tick (it arms it only after handling
// the last), then waits until arrived says that period's resyncs have
// reached the handlers.
func stepResync(t *testing.T, clock *workqueue.FakeClock, period time.Duration, arrived func() bool, msgAndArgs ...any) {
	t.Helper()
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	clock.Step(period)
	require.Eventually(t, arrived, hangGuard, time.Millisecond, msgAndArgs...)
}
