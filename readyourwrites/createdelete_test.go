package readyourwrites_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
)

// deletesHeldBack is a memlistwatch whose watches pass every event on at
// once except DELETED ones, which wait until release is closed: a cache
// that has applied a create and not yet the delete that followed it.
type deletesHeldBack struct {
	*memlistwatch.ListerWatcher[*corev1.ConfigMap]
	release chan struct{}
}

func (d deletesHeldBack) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := d.ListerWatcher.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan watch.Event)
	stop := make(chan struct{})
	go func() {
		defer close(out)
		for e := range w.ResultChan() {
			if e.Type == watch.Deleted {
				select {
				case <-d.release:
				case <-stop:
					return
				}
			}
			select {
			case out <- e:
			case <-stop:
				return
			}
		}
	}()
	return &heldBackWatch{inner: w, out: out, stop: stop}, nil
}

type heldBackWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
}

func (h *heldBackWatch) Stop()                          { h.inner.Stop(); closeOnce(h.stop) }
func (h *heldBackWatch) ResultChan() <-chan watch.Event { return h.out }

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// A reconcile that creates a child and then deletes it (a rollback after
// a later step failed) records both writes. The delete is recorded while
// the cache does not hold the child yet (its create has not arrived), and
// the guard takes "the cache does not hold it" for "the cache shows the
// delete": the record is dropped at once. When the create arrives, the
// create's record is seen, and the key is released while its cache holds
// the child its last reconcile deleted, against the package invariant "a
// key with a recorded write is reconciled again only once ... (for a
// delete) [the cache] no longer holds it".
func TestADeleteRecordedBeforeItsObjectsCreateReachedTheCacheStillHoldsTheKey(t *testing.T) {
	for _, opts := range []readyourwrites.Options{{}, {OpaqueResourceVersions: true}} {
		t.Run(fmt.Sprintf("opaque=%v", opts.OpaqueResourceVersions), func(t *testing.T) {
			api := deletesHeldBack{ListerWatcher: memlistwatch.New[*corev1.ConfigMap](), release: make(chan struct{})}
			inf := must(si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api}))
			run(t, inf)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			require.NoError(t, si.WaitForCacheSync(ctx, inf))

			guard := must(readyourwrites.New(opts))
			defer guard.Close()
			children := readyourwrites.Track(guard, inf)

			// One reconcile of owner: create the child, then delete it again.
			created := must(api.Create(configMap("child")))
			require.NoError(t, children.Wrote(owner, created))
			require.NoError(t, api.Delete(informer.KeyFor(created)))
			children.Deleted(owner, informer.KeyFor(created), created.UID, nil)

			// The cache applies the create; the delete is still on its way.
			require.NoError(t, inf.WaitFor(ctx, created.ResourceVersion))
			_, inCache := inf.Indexer().Get(informer.KeyFor(created))
			require.True(t, inCache, "the cache holds the child, at its create")
			held, _, _ := guard.Hold(owner)
			require.True(t, held, "owner was released while its cache still holds the child its reconcile deleted")

			// The delete arrives: now the key runs.
			close(api.release)
			for {
				held, wake, _ := guard.Hold(owner)
				if !held {
					break
				}
				select {
				case <-wake:
				case <-ctx.Done():
					t.Fatal("owner is still held after the delete reached the cache")
				}
			}
		})
	}
}
