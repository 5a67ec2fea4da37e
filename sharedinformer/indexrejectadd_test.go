package sharedinformer_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/sharedinformer"
)

// An object created in a state an IndexFunc rejects never enters the
// cache, and no handler hears of it (OnAdd: "obj is new to this
// handler"). When its delete comes in a later pop, the DeltaFIFO drops it
// as the delete of a key nobody knows. But when the create and the
// delete are queued under one key before the informer pops it, process
// now applies the delete after the rejected add (2426fd2), and every
// handler gets OnDelete for an object it was never told of: a handler
// counting its objects (adds minus deletes), or lowering an expectation
// per delete, goes wrong, and whether it does depends on how the
// informer's pops happened to batch the same two events.
func TestAHandlerHearsNoDeleteOfAnObjectTheIndexRejectedAtItsCreate(t *testing.T) {
	blockOnce := sync.Once{}
	unblock := make(chan struct{})
	blocked := make(chan struct{})
	queuedDelete := make(chan struct{})
	processedA := make(chan struct{}, 16)
	var queuedOnce sync.Once

	trace := func(e informer.TraceEvent) {
		if e.Stage != informer.StageFIFO || e.Key != "default/a" {
			return
		}
		if e.Kind == deltafifo.KindQueued && strings.HasPrefix(e.Detail, string(deltafifo.Deleted)) {
			queuedOnce.Do(func() { close(queuedDelete) })
		}
		if e.Kind == deltafifo.KindProcessed {
			processedA <- struct{}{}
		}
	}
	bad := func(cm *corev1.ConfigMap) ([]string, error) {
		if cm.Data["bad"] != "" {
			return nil, errors.New("no owner label")
		}
		return []string{"ok"}, nil
	}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"owner": bad},
		Trace:    trace,
		OnError: func(err error) {
			// x's rejection holds the pop loop until a's create and
			// delete are both queued.
			if strings.Contains(err.Error(), "default/x") {
				blockOnce.Do(func() {
					close(blocked)
					<-unblock
				})
			}
		},
	})
	_, err := lw.Create(configMap("x"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	badX := configMap("x")
	badX.Data["bad"] = "1"
	_, err = lw.Update(badX)
	require.NoError(t, err)
	select {
	case <-blocked:
	case <-time.After(hangGuard):
		t.Fatal("x's rejection never reached OnError")
	}
	badA := configMap("a")
	badA.Data["bad"] = "1"
	_, err = lw.Create(badA) // rejected by the index: never cached, never told
	require.NoError(t, err)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	select {
	case <-queuedDelete:
	case <-time.After(hangGuard):
		t.Fatal("a's delete was never queued")
	}
	close(unblock)
	select {
	case <-processedA:
	case <-time.After(hangGuard):
		t.Fatal("a was never processed")
	}
	_, err = lw.Create(configMap("z")) // a marker: everything before it was handed over
	require.NoError(t, err)

	require.Eventually(t, func() bool { return slices.Contains(rec.snapshot(), "add z") }, hangGuard, 5*time.Millisecond)

	require.Equal(t, []string{"add x (initial)", "add z"}, rec.snapshot(),
		"a was rejected at its create, never cached and never told, but the handler is told it was deleted")
}
