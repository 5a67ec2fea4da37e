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
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
)

// rejectingInformer is a running informer of ConfigMaps whose "owner"
// index rejects every ConfigMap that has data "bad" (badConfigMap), with
// an error to OnError, and a recorder for its one handler. Its pop loop
// can be held at a rejection of x (holdPopsAtX), outside the DeltaFIFO's
// lock, so that a test can queue several changes of a under one key
// before the informer pops them.
type rejectingInformer struct {
	inf *cmInformer
	lw  *memlistwatch.ListerWatcher[*corev1.ConfigMap]
	rec *recorder
	// processedA has a value each time the informer has processed a.
	processedA chan struct{}

	queuedOnce                      sync.Once
	blocked, unblock, queuedDeleteA chan struct{}
}

// newRejectingInformer creates the ConfigMaps named, starts the informer
// (which lists them first) and waits until it has synced.
func newRejectingInformer(t *testing.T, names ...string) *rejectingInformer {
	t.Helper()
	s := &rejectingInformer{rec: &recorder{}, processedA: make(chan struct{}, 16),
		blocked: make(chan struct{}), unblock: make(chan struct{}), queuedDeleteA: make(chan struct{})}
	s.inf, s.lw = newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Indexers: rejectingBad(),
		Trace:    s.trace,
		OnError:  holdAt("default/x", s.blocked, s.unblock),
	})
	for _, name := range names {
		_, err := s.lw.Create(configMap(name))
		require.NoError(t, err)
	}
	_, err := s.inf.AddEventHandler(s.rec)
	require.NoError(t, err)
	runInformer(t, s.inf)
	waitSynced(t, s.inf)
	return s
}

// trace reports a's processing, and the first time a's delete is queued.
func (s *rejectingInformer) trace(e informer.TraceEvent) {
	if e.Stage != informer.StageFIFO || e.Key != "default/a" {
		return
	}
	if e.Kind == deltafifo.KindQueued && strings.HasPrefix(e.Detail, string(deltafifo.Deleted)) {
		s.queuedOnce.Do(func() { close(s.queuedDeleteA) })
	}
	if e.Kind == deltafifo.KindProcessed {
		s.processedA <- struct{}{}
	}
}

// holdPopsAtX makes x bad, and returns once the informer's pop loop is
// held in OnError by x's rejection (the first only), until
// releaseOnceADeleteQueued.
func (s *rejectingInformer) holdPopsAtX(t *testing.T) {
	t.Helper()
	_, err := s.lw.Update(badConfigMap("x"))
	require.NoError(t, err)
	select {
	case <-s.blocked:
	case <-time.After(hangGuard):
		t.Fatal("x's rejection never reached OnError")
	}
}

// releaseOnceADeleteQueued waits until a's delete is queued, lets the
// pop loop go on, and waits until the informer has processed a.
func (s *rejectingInformer) releaseOnceADeleteQueued(t *testing.T) {
	t.Helper()
	select {
	case <-s.queuedDeleteA:
	case <-time.After(hangGuard):
		t.Fatal("a's delete was never queued")
	}
	close(s.unblock)
	select {
	case <-s.processedA:
	case <-time.After(hangGuard):
		t.Fatal("a was never processed")
	}
}

// rejectingBad is an "owner" index that rejects every ConfigMap with
// data "bad" (badConfigMap).
func rejectingBad() map[string]indexer.IndexFunc[*corev1.ConfigMap] {
	return map[string]indexer.IndexFunc[*corev1.ConfigMap]{"owner": func(cm *corev1.ConfigMap) ([]string, error) {
		if cm.Data["bad"] != "" {
			return nil, errors.New("no owner label")
		}
		return []string{"ok"}, nil
	}}
}

// holdAt is an OnError that, the first time it reports key's rejection,
// closes blocked and waits until unblock is closed: the informer's pop
// loop held outside the DeltaFIFO's lock, while writes, resyncs and
// relists queue behind it.
func holdAt(key string, blocked, unblock chan struct{}) func(error) {
	var once sync.Once
	return func(err error) {
		if strings.Contains(err.Error(), key) {
			once.Do(func() {
				close(blocked)
				<-unblock
			})
		}
	}
}

// badConfigMap is configMap(name) in a state the "owner" index rejects.
func badConfigMap(name string) *corev1.ConfigMap {
	cm := configMap(name)
	cm.Data["bad"] = "1"
	return cm
}
