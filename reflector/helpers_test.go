package reflector_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// recorder is a Store that keeps a mirror of what it was told, the way the
// informer's cache would end up, and counts each kind of call.
type recorder[T informer.Object] struct {
	mu       sync.Mutex
	mirror   map[informer.Key]T
	calls    map[string]int // "add", "update", "delete", "replace", "resync"
	replaced [][]string     // the keys of each Replace, in order
	fail     error          // returned by every call when set
}

func newRecorder[T informer.Object]() *recorder[T] {
	return &recorder[T]{mirror: map[informer.Key]T{}, calls: map[string]int{}}
}

func (s *recorder[T]) Add(obj T) error    { return s.put("add", obj) }
func (s *recorder[T]) Update(obj T) error { return s.put("update", obj) }
func (s *recorder[T]) Delete(obj T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["delete"]++
	if s.fail != nil {
		return s.fail
	}
	delete(s.mirror, mustKey(obj))
	return nil
}

func (s *recorder[T]) Replace(objs []T, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["replace"]++
	if s.fail != nil {
		return s.fail
	}
	s.mirror = map[informer.Key]T{}
	var keys []string
	for _, obj := range objs {
		s.mirror[mustKey(obj)] = obj
		keys = append(keys, mustKey(obj).String())
	}
	s.replaced = append(s.replaced, keys)
	return nil
}

func (s *recorder[T]) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["resync"]++
	return s.fail
}

func (s *recorder[T]) Bookmark(string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["bookmark"]++
	return s.fail
}

func (s *recorder[T]) put(call string, obj T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[call]++
	if s.fail != nil {
		return s.fail
	}
	s.mirror[mustKey(obj)] = obj
	return nil
}

// count returns how many times call was made.
func (s *recorder[T]) count(call string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[call]
}

// state returns the mirror as key → resourceVersion.
func (s *recorder[T]) state() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, obj := range s.mirror {
		out[k.String()] = obj.GetResourceVersion()
	}
	return out
}

func (s *recorder[T]) replaces() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.replaced)
}

func (s *recorder[T]) setFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

func mustKey(obj informer.Object) informer.Key {
	k, err := informer.KeyOf(obj)
	if err != nil {
		panic(err)
	}
	return k
}

// errorLog collects what OnError receives.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) hook(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// count returns how many reported errors satisfy match.
func (l *errorLog) count(match func(error) bool) int {
	n := 0
	for _, err := range l.all() {
		if match(err) {
			n++
		}
	}
	return n
}

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

// traceLog collects trace events.
type traceLog struct {
	mu     sync.Mutex
	events []informer.TraceEvent
}

func (l *traceLog) hook(e informer.TraceEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// of returns the events of one kind.
func (l *traceLog) of(kind string) []informer.TraceEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []informer.TraceEvent
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// run starts r and stops it at the test's cleanup, failing the test if Run
// does not return within 10s of its context ending.
func run[T informer.Object](t *testing.T, r *reflector.Reflector[T]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(hangGuard):
				t.Errorf("Run did not return within %v of its context ending", hangGuard)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// hangGuard bounds every wait for something that must happen: a guard
// against a hang, not a timing. A short bound would assert the machine's
// speed, which a loaded one (two cores, -race, -p 4) breaks.
const hangGuard = time.Minute

// eventually is require.Eventually bounded by hangGuard: cond must come
// true, however long a loaded machine takes.
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, hangGuard, 10*time.Millisecond, append([]any{msg}, args...)...)
}

// fastBackoff makes failures cheap in tests that provoke them.
func fastBackoff[T informer.Object](o reflector.Options[T]) reflector.Options[T] {
	o.BackoffInitial = 10 * time.Millisecond
	o.BackoffMax = 100 * time.Millisecond
	return o
}

func cm(ns, name string) *corev1.ConfigMap {
	c := configMap(name, "1")
	c.Namespace = ns
	return c
}

// sortedReplaces sorts the keys within each Replace, for comparisons that
// should not depend on the server's order.
func sortedReplaces(replaces [][]string) [][]string {
	for _, keys := range replaces {
		slices.Sort(keys)
	}
	return replaces
}
