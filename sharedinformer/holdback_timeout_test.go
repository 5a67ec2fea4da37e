package sharedinformer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

var errSlow = errors.New("slow consumer")

// The factory shortens a list's hold-back to a quarter of its client's
// Timeout, and never lengthens it: a Timeout of 5 minutes must not hold a
// LIST back 75s, past kube-apiserver's own 60s request timeout, which
// would end the LIST every time. The consumer pops one object a second,
// so only HoldBack lets the unpaged LIST of 5,000 finish.
func TestAClientTimeoutNeverLengthensTheHoldBack(t *testing.T) {
	t.Run("no client Timeout", func(t *testing.T) { assert.LessOrEqual(t, heldBack(t, 0, nil), 15*time.Second) })
	t.Run("client Timeout 5m", func(t *testing.T) {
		held := heldBack(t, 5*time.Minute, nil)
		assert.Less(t, held, 60*time.Second, "held back past kube-apiserver's request timeout (60s): the server ends the LIST and it starts over")
		assert.LessOrEqual(t, held, 15*time.Second, "a client Timeout made the hold-back longer than the default")
	})
}

// The part queue's limit decides when a list waits for a slow informer:
// at the default (4,096 keys, fewer than the 5,000 listed) the LIST is
// held back; with a limit above the list, or none, it is never held.
func TestAnInformersPartQueueLimitDecidesWhenAListWaitsForIt(t *testing.T) {
	assert.Greater(t, heldBack(t, 0, nil), time.Duration(0), "the default limit holds the LIST back")
	for _, limit := range []int{-1, 10000} {
		assert.Zero(t, heldBack(t, 0, sharedinformer.WithPartQueueLimit(limit)), "limit %d: the LIST was held back", limit)
	}
}

// heldBack returns how long the factory's first LIST took, on simulated
// time (reading it costs none: what it took is the hold-back), with opt
// given to its InformerFor if not nil.
func heldBack(t *testing.T, clientTimeout time.Duration, opt sharedinformer.InformerOption) (took time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		big := strings.Repeat("x", 1000)
		for i := range 5000 { // more than deltafifo.DefaultPartQueueLimit
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%04d", i)}, Data: map[string]string{"v": big}}
			require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
		}
		cfg := mem.Config()
		cfg.Timeout = clientTimeout

		var mu sync.Mutex
		var listed time.Time
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Trace: func(e informer.TraceEvent) {
				if e.Stage == informer.StageReflector && e.Kind == reflector.KindList {
					mu.Lock()
					defer mu.Unlock()
					if listed.IsZero() {
						listed = time.Now()
					}
				}
			},
			// A slow consumer: each object costs it a second, outside the
			// DeltaFIFO's lock (its index function rejects it, and the
			// report takes the time).
			OnError: func(err error) {
				if errors.Is(err, errSlow) {
					time.Sleep(time.Second)
				}
			}})
		require.NoError(t, err)
		opts := []sharedinformer.InformerOption{sharedinformer.InNamespace("default"),
			sharedinformer.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{
				"slow": func(*corev1.ConfigMap) ([]string, error) { return nil, errSlow },
			})}
		if opt != nil {
			opts = append(opts, opt)
		}
		_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, opts...)
		require.NoError(t, err)
		start := time.Now()
		f.Start(ctx)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		cancel()
		f.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.False(t, listed.IsZero(), "the LIST never ended")
		took = listed.Sub(start)
		t.Logf("client Timeout %v: the LIST took %v", clientTimeout, took)
	})
	return took
}
