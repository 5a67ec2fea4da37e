package sharedinformer_test

import (
	"errors"
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

// An update whose object an IndexFunc rejects is dropped, with an error
// to OnError: the cache keeps the version it had. But a delete that the
// watch delivered right after it, for the same key, is a different
// change: the server no longer has the object, and the cache must not
// keep it. When both are queued under one key before the informer pops
// it, the rejected update must not take the delete down with it.
func TestADeleteQueuedBehindAnUpdateTheIndexRejectsStillDeletesTheObject(t *testing.T) {
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
			// The first rejection (of x) holds the pop loop, outside the
			// DeltaFIFO's lock, until a's two changes are queued.
			if strings.Contains(err.Error(), "default/x") {
				blockOnce.Do(func() {
					close(blocked)
					<-unblock
				})
			}
		},
	})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	_, err = lw.Create(configMap("x"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	<-processedA // a's add, of the initial list

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
	_, err = lw.Update(badA)
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

	_, cached := inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.False(t, cached, "the server deleted a, and the watch said so, but the cache still holds it")
	rec.eventually(t, "add a (initial)", "add x (initial)", "delete a")
}
