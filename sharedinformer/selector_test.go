package sharedinformer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
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

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// An informer built WithLabels asks the server for the labelled objects
// only, on every LIST and WATCH, so an object without the label is never
// sent, decoded or cached: it costs the informer no memory. In a synctest
// bubble, waiting for the event that shows the WATCH delivered: a loaded
// machine can make the informer slow, never make it fail.
func TestAnInformerWithALabelSelectorAsksTheServerForAndCachesOnlyTheLabelledObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		admin, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		create := func(name, app string) error {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}}}
			return admin.Post().Namespace("default").Resource("secrets").Body(secret).Do(t.Context()).Error()
		}
		for _, name := range []string{"demo-1", "demo-2", "other"} {
			require.NoError(t, create(name, strings.TrimSuffix(strings.TrimSuffix(name, "-1"), "-2")))
		}

		var mu sync.Mutex
		var selectors []string // the labelSelector of each LIST and WATCH of Secrets
		cfg := mem.Config()
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if strings.HasSuffix(r.URL.Path, "/secrets") {
					mu.Lock()
					selectors = append(selectors, r.URL.Query().Get("labelSelector"))
					mu.Unlock()
				}
				return rt.RoundTrip(r)
			})
		}
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		secrets, err := sharedinformer.InformerFor[*corev1.Secret](t.Context(), f, sharedinformer.InNamespace("default"), sharedinformer.WithLabels("app=demo"))
		require.NoError(t, err)
		arrived := make(chan struct{}) // closed when demo-3 reaches a handler, so the cache already holds it
		_, err = secrets.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.Secret]{AddFunc: func(s *corev1.Secret, _ bool) {
			if s.Name == "demo-3" {
				close(arrived)
			}
		}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer func() { cancel(); f.Wait() }()
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx))

		require.NoError(t, create("other-2", "other"))
		require.NoError(t, create("demo-3", "demo"))
		// other-2 was written before demo-3, so had the WATCH sent it, the
		// cache would hold it by the time demo-3 arrives.
		select {
		case <-arrived:
		case <-time.After(time.Minute): // bubble time: a guard against hanging, not a timing
			t.Fatal("demo-3 never arrived")
		}

		var cached []string
		for _, s := range secrets.Lister().List(nil) {
			cached = append(cached, s.Name)
		}
		slices.Sort(cached)
		assert.Equal(t, []string{"demo-1", "demo-2", "demo-3"}, cached, "only the labelled Secrets are cached")
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, selectors)
		for _, s := range selectors {
			assert.Equal(t, "app=demo", s, "every LIST and WATCH asks the server to filter")
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
