package deltafifo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

type fifo = deltafifo.DeltaFIFO[*corev1.ConfigMap]

// cm returns a ConfigMap default/name at resourceVersion rv.
func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

func key(name string) informer.Key { return informer.Key{Namespace: "default", Name: name} }

// cache is a map-backed KnownObjects: the consumer's side, kept apart from
// the indexer package so these tests prove the DeltaFIFO alone.
type cache map[informer.Key]*corev1.ConfigMap

func (c cache) Get(k informer.Key) (*corev1.ConfigMap, bool) { obj, ok := c[k]; return obj, ok }

// ListKeys lists keys sorted, unlike the indexer, so that the order of
// tombstones and resyncs is deterministic for the model test.
func (c cache) ListKeys() []informer.Key { return sortedKeys(c) }

func (c cache) Len() int { return len(c) }

// apply is what the shared informer does with popped deltas: make the
// cache hold the newest state.
func (c cache) apply(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap]) {
	if newest := d.Newest(); newest.Type == deltafifo.Deleted {
		delete(c, k)
	} else {
		c[k] = newest.Object
	}
}

// summary renders deltas as "Added@1 Deleted?@1" (? = final state unknown).
func summary(d deltafifo.Deltas[*corev1.ConfigMap]) string {
	parts := make([]string, len(d))
	for i, delta := range d {
		mark := ""
		if delta.FinalStateUnknown {
			mark = "?"
		}
		parts[i] = fmt.Sprintf("%s%s@%s", delta.Type, mark, delta.Object.ResourceVersion)
	}
	return strings.Join(parts, " ")
}

// popped is one Pop's result, rendered for comparison.
type popped struct {
	Key     string
	Deltas  string
	Initial bool
}

// popOne pops one key, failing the test if none is queued within a
// minute: a guard against a hang, not a timing (Pop checks its context
// before it looks at the queue, so a second's bound failed a test whose
// goroutine a loaded machine left unscheduled for that long).
func popOne(t *testing.T, f *fifo, c cache) popped {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got popped
	err := f.Pop(ctx, func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
		got = popped{k.String(), summary(d), initial}
		if c != nil {
			c.apply(k, d)
		}
		return nil
	})
	require.NoError(t, err)
	return got
}

// popAll pops until the queue is empty.
func popAll(t *testing.T, f *fifo, c cache) []popped {
	t.Helper()
	var all []popped
	for f.Len() > 0 {
		all = append(all, popOne(t, f, c))
	}
	return all
}
