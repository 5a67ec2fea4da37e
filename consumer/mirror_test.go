package consumer_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"example.com/consumer"
	"github.com/listwatch/informer/testenv"
)

// The library's public control plane, started as its docs say.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestMirrorFollowsItsSourceThroughCreateUpdateAndDelete(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	api := configMapsIn{client: client, ns: ns}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	_, err = api.create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}})
	require.NoError(t, err)
	source := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{consumer.SourceLabel: "yes"}},
		Data:       map[string]string{"color": "blue"},
	}
	source, err = api.create(ctx, source)
	require.NoError(t, err)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- consumer.Run(runCtx, cp.Config(), ns, 2) }()

	mirrorData := func() map[string]string {
		m, err := api.get(ctx, "settings-mirror")
		if err != nil {
			return nil
		}
		return m.Data
	}
	require.Eventually(t, func() bool { return mirrorData()["color"] == "blue" }, time.Minute, 50*time.Millisecond,
		"the mirror is created with the source's data")
	// The handler saw "plain" before "settings" and enqueued nothing for it.
	_, err = api.get(ctx, "plain-mirror")
	assert.True(t, apierrors.IsNotFound(err), "an unlabelled ConfigMap gets no mirror: %v", err)

	source.Data["color"] = "green"
	err = api.update(ctx, source)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return mirrorData()["color"] == "green" }, time.Minute, 50*time.Millisecond,
		"the mirror follows an update")

	require.NoError(t, api.delete(ctx, "settings"))
	require.Eventually(t, func() bool {
		_, err := api.get(ctx, "settings-mirror")
		return apierrors.IsNotFound(err)
	}, time.Minute, 50*time.Millisecond, "the mirror is deleted with its source")

	stop()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("Run did not return within a minute of its context ending")
	}
}

// configMapsIn writes and reads one namespace's ConfigMaps on the server.
type configMapsIn struct {
	client *rest.RESTClient
	ns     string
}

func (c configMapsIn) get(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	return out, c.client.Get().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Into(out)
}

func (c configMapsIn) create(ctx context.Context, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	return out, c.client.Post().Namespace(c.ns).Resource("configmaps").Body(cm).Do(ctx).Into(out)
}

func (c configMapsIn) update(ctx context.Context, cm *corev1.ConfigMap) error {
	return c.client.Put().Namespace(c.ns).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Error()
}

func (c configMapsIn) delete(ctx context.Context, name string) error {
	return c.client.Delete().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Error()
}
