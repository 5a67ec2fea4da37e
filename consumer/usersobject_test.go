package consumer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"example.com/consumer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// A ConfigMap that happens to be named "<source>-mirror" but is not a
// mirror (no MirrorOfLabel naming that source) is a user's object: the
// controller neither overwrites it nor deletes it when the source goes.
// A probe source named after it in key order is mirrored, and its mirror
// deleted, after the source's own reconciles: one worker takes the
// keys in the order their events came.
func TestAUsersConfigMapNamedLikeAMirrorIsLeftAlone(t *testing.T) {
	api, cfg, ctx := onFake(t, fakeapiserver.New())
	users, err := api.create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-mirror"}, Data: map[string]string{"mine": "yes"}})
	require.NoError(t, err)
	for _, name := range []string{"web", "zz-probe"} {
		_, err := api.create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{consumer.SourceLabel: "yes"}},
			Data:       map[string]string{"color": "blue"},
		})
		require.NoError(t, err)
	}
	runMirror(t, ctx, cfg, api)

	require.Eventually(t, func() bool { _, err := api.get(ctx, "zz-probe-mirror"); return err == nil }, 30*time.Second, 10*time.Millisecond)
	got, err := api.get(ctx, "web-mirror")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"mine": "yes"}, got.Data, "the user's ConfigMap was overwritten")

	require.NoError(t, api.delete(ctx, "web"))
	require.NoError(t, api.delete(ctx, "zz-probe"))
	require.Eventually(t, func() bool { _, err := api.get(ctx, "zz-probe-mirror"); return apierrors.IsNotFound(err) }, 30*time.Second, 10*time.Millisecond)
	got, err = api.get(ctx, "web-mirror")
	require.NoError(t, err, "the user's ConfigMap was deleted with the source")
	assert.Equal(t, users.UID, got.UID)
}

// onFake serves handler (a fakeapiserver, or a handler in front of one)
// in memory, with namespace "demo" made, for a test of at most a minute:
// the mirror controller's namespace as a client sees it, the config to
// reach it, and a context that ends with the minute.
func onFake(t *testing.T, handler http.Handler) (configMapsIn, *rest.Config, context.Context) {
	t.Helper()
	mem := fakeapiserver.ServeInMemory(handler)
	t.Cleanup(mem.Close)
	client, err := testenv.CoreV1Client(mem.Config())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	require.NoError(t, client.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}).Do(ctx).Error())
	return configMapsIn{client: client, ns: "demo"}, mem.Config(), ctx
}

// runMirror runs the mirror controller, one worker, in api's namespace
// until the test ends.
func runMirror(t *testing.T, ctx context.Context, cfg *rest.Config, api configMapsIn) {
	t.Helper()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- consumer.Run(runCtx, cfg, api.ns, 1) }()
	t.Cleanup(func() { stop(); <-done })
}
