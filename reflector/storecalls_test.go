package reflector_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// callLog is a Store that notes each call ("update cm-1@7",
// "replace@4", "resync"), the goroutine that made it, and the
// resourceVersion it carried.
type callLog struct {
	mu    sync.Mutex
	calls []string
	by    []uint64 // the goroutine of each call
	rv    string   // the resourceVersion of the latest call that carried one
}

var _ reflector.Store[*corev1.ConfigMap] = (*callLog)(nil)

func (l *callLog) Add(obj *corev1.ConfigMap) error {
	return l.note("add "+obj.Name, obj.ResourceVersion)
}

func (l *callLog) Update(obj *corev1.ConfigMap) error {
	return l.note("update "+obj.Name, obj.ResourceVersion)
}

func (l *callLog) Delete(obj *corev1.ConfigMap) error {
	return l.note("delete "+obj.Name, obj.ResourceVersion)
}

func (l *callLog) Replace(_ []*corev1.ConfigMap, rv string) error { return l.note("replace", rv) }
func (l *callLog) Resync() error                                  { return l.note("resync", "") }
func (l *callLog) Bookmark(rv string) error                       { return l.note("bookmark", rv) }

func (l *callLog) note(call, rv string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rv != "" {
		call += "@" + rv
		l.rv = rv
	}
	l.calls = append(l.calls, call)
	l.by = append(l.by, goroutineID())
	return nil
}

func (l *callLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rv
}

// goroutineID is the number of the calling goroutine, read from the first
// line of its stack: "goroutine 18 [running]:".
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, err := strconv.ParseUint(strings.Fields(string(buf))[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// Writes, bookmarks and resync ticks interleave; every Store call comes
// from the goroutine that called Run, the changes in the server's order,
// and LastSyncResourceVersion is always the resourceVersion of the last
// call that carried one. In a synctest bubble, so the resync ticks are
// on the bubble's clock and each step ends when the reflector is idle.
func TestTheStoreIsCalledFromRunsGoroutineInTheServersOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := memlistwatch.New[*corev1.ConfigMap]()
		for _, name := range []string{"cm-0", "cm-1", "cm-2"} { // rv 2, 3, 4
			_, err := lw.Create(cm("default", name))
			require.NoError(t, err)
		}
		store := &callLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, ResyncPeriod: time.Second}))
		ctx, cancel := context.WithCancel(t.Context())
		runner, stopped := make(chan uint64, 1), make(chan error, 1)
		go func() {
			runner <- goroutineID()
			stopped <- r.Run(ctx)
		}()
		synctest.Wait()
		assert.Equal(t, "4", r.LastSyncResourceVersion())

		want := []string{"replace@4"} // what the server reported, in order
		for i := range 12 {
			var err error
			switch i % 3 { // cm-0 comes and goes; cm-1 changes
			case 0:
				err = lw.Delete(informer.Key{Namespace: "default", Name: "cm-0"})
				want = append(want, "delete cm-0@"+lw.ResourceVersion())
			case 1:
				_, err = lw.Update(cm("default", "cm-1"))
				want = append(want, "update cm-1@"+lw.ResourceVersion())
			default:
				_, err = lw.Create(cm("default", "cm-0"))
				want = append(want, "add cm-0@"+lw.ResourceVersion())
			}
			require.NoError(t, err)
			if i%4 == 3 { // writes elsewhere, then a bookmark past them
				lw.AdvanceResourceVersion(5)
				require.Equal(t, 1, lw.Bookmark())
				want = append(want, "bookmark@"+lw.ResourceVersion())
			}
			time.Sleep(400 * time.Millisecond) // a resync tick every second
			synctest.Wait()
			assert.Equal(t, store.last(), r.LastSyncResourceVersion(), "after step %d", i)
		}
		cancel()
		require.NoError(t, <-stopped)

		id := <-runner
		store.mu.Lock()
		defer store.mu.Unlock()
		for n, by := range store.by {
			assert.Equal(t, id, by, "call %d (%s) came from another goroutine than Run's", n, store.calls[n])
		}
		changes := slices.DeleteFunc(slices.Clone(store.calls), func(c string) bool { return c == "resync" })
		assert.Equal(t, want, changes, "the changes in the server's order")
		assert.GreaterOrEqual(t, len(store.calls)-len(changes), 4, "resync ticks were handled, on Run's goroutine too")
	})
}
