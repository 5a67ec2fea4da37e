package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// hangGuard bounds every wait for something that must happen: a guard
// against a hang, not a timing. The control plane is real processes on a
// machine that may be loaded (two cores, -race, -p 4); a short bound
// would assert its speed.
const hangGuard = time.Minute

// coreClient returns a core/v1 client for cfg, failing the test on error.
func coreClient(t *testing.T, cfg *rest.Config) *rest.RESTClient {
	t.Helper()
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	return client
}

// createConfigMap creates a ConfigMap and returns it as the server stored it.
func createConfigMap(ctx context.Context, t *testing.T, client *rest.RESTClient, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	out := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Into(out))
	return out
}

// watchConfigMaps opens a watch on ns's ConfigMaps from rv.
func watchConfigMaps(ctx context.Context, client *rest.RESTClient, ns, rv string) (watch.Interface, error) {
	opts := &metav1.ListOptions{ResourceVersion: rv, Watch: true}
	return client.Get().Namespace(ns).Resource("configmaps").
		VersionedParams(opts, metav1.ParameterCodec).Watch(ctx)
}

// nextEvent returns the next event from w, failing the test if none comes
// within timeout or the stream ends.
func nextEvent(t *testing.T, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the watch ended instead of delivering an event")
		return ev
	case <-time.After(timeout):
		t.Fatalf("no watch event within %v", timeout)
		return watch.Event{}
	}
}
