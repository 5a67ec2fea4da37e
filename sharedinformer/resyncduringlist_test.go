package sharedinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// heldLister is a memlistwatch whose LISTs, once hold is called, wait
// for release, each saying on entered that it has begun.
type heldLister struct {
	*memlistwatch.ListerWatcher[*corev1.ConfigMap]
	held    chan struct{} // closed by hold
	entered chan struct{}
	release chan struct{}
}

func (h *heldLister) hold() { close(h.held) }

func (h *heldLister) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	select {
	case <-h.held:
		h.entered <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, metav1.ListMeta{}, ctx.Err()
		}
	default:
	}
	return h.ListerWatcher.List(ctx, opts)
}

// A resync is made on the reflector's goroutine between other work,
// never during a LIST (reflector/resync.go): a handler whose period
// passes while a relist is being read is resynced once that list is in,
// however many check periods late. Here the LIST is held while the
// clock passes the handler's 1s period five times over: no resync comes
// meanwhile, and one comes when the list ends.
func TestAResyncDueDuringAListWaitsForTheListToEnd(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	lw := &heldLister{ListerWatcher: memlistwatch.New[*corev1.ConfigMap](),
		held: make(chan struct{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, Clock: clock})
	require.NoError(t, err)
	_, err = lw.Create(configMap("a"))
	require.NoError(t, err)
	counter := &resyncCounter{}
	_, err = inf.AddEventHandler(counter.handler(), sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")

	// A relist: the watch's history is compacted away while it is down.
	lw.hold()
	lw.Disconnect()
	_, err = lw.Create(configMap("b"))
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	select {
	case <-lw.entered:
	case <-time.After(hangGuard):
		t.Fatal("the relist's LIST never began")
	}

	clock.Step(5 * time.Second) // the handler was due at 1s
	assert.Zero(t, counter.n.Load(), "a resync during the LIST: the reflector's goroutine is in it")

	close(lw.release)
	require.Eventually(t, func() bool { return counter.n.Load() == 1 }, hangGuard, time.Millisecond,
		"the tick that came during the LIST is handled once the list is in; resyncs %d", counter.n.Load())
}
