package sharedinformer_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// factoryWithASlowObject is a factory on an in-memory fake that holds
// one ConfigMap, "slow" in "default", with labels, and a client of it;
// with metrics, the factory registers its informers' series (so two of
// one name and resource collide). Call it in a synctest bubble.
func factoryWithASlowObject(t *testing.T, labels map[string]string, withMetrics bool) (*sharedinformer.Factory, *rest.RESTClient) {
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	t.Cleanup(mem.Close)
	client, err := testenv.CoreV1Client(mem.Config())
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "slow", Labels: labels}}
	require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(cm).Do(t.Context()).Error())
	opts := sharedinformer.FactoryOptions{Scheme: factoryScheme, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}}
	if withMetrics {
		opts.Metrics, err = metrics.NewRegistry(metrics.NewMemory())
		require.NoError(t, err)
	}
	f, err := sharedinformer.NewFactory(mem.Config(), opts)
	require.NoError(t, err)
	return f, client
}

// slowHandler adds to inf a handler whose first call stays in until
// finish is closed: the informer then stops only once it returns.
// inHandler is closed when that call has begun.
func slowHandler(t *testing.T, inf *sharedinformer.Informer[*corev1.ConfigMap]) (reg *sharedinformer.Registration, inHandler, finish chan struct{}) {
	inHandler, finish = make(chan struct{}), make(chan struct{})
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {
		close(inHandler)
		<-finish // a slow call, still running when the informer is told to stop
	}})
	require.NoError(t, err)
	return reg, inHandler, finish
}
