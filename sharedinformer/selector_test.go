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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// An informer built WithLabels asks the server for the labelled objects
// only, on every LIST and WATCH, so an object without the label is never
// sent, decoded or cached: it costs the informer no memory.
func TestAnInformerWithALabelSelectorAsksTheServerForAndCachesOnlyTheLabelledObjects(t *testing.T) {
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	defer mem.Close()
	admin, err := kubernetes.NewForConfig(mem.Config())
	require.NoError(t, err)
	for _, name := range []string{"demo-1", "demo-2", "other"} {
		labels := map[string]string{"app": strings.TrimSuffix(strings.TrimSuffix(name, "-1"), "-2")}
		_, err := admin.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		require.NoError(t, err)
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
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); f.Wait() }()
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(ctx))

	_, err = admin.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-2", Labels: map[string]string{"app": "other"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().Secrets("default").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "demo-3", Labels: map[string]string{"app": "demo"}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(secrets.Lister().List(nil)) == 3 }, 5*time.Second, 10*time.Millisecond, "demo-3 never arrived")

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
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
