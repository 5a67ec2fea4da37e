package sharedinformer_test

import (
	"io"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// A write is a request you build with Factory.RESTClient, naming the
// resource and the body, and the answer is decoded into a typed object
// by the codecs of the factory's Scheme. A factory with no Scheme has no
// client to give.
func TestAFactorysRESTClientSendsTheRequestYouBuildAndDecodesTheAnswerWithItsScheme(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
		defer mem.Close()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		factory := func(scheme *runtime.Scheme) *sharedinformer.Factory {
			f, err := sharedinformer.NewFactory(mem.Config(), sharedinformer.FactoryOptions{Scheme: scheme, Logger: quiet})
			require.NoError(t, err)
			return f
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: "default"},
			Data: map[string][]byte{"k": []byte("v")}}

		core := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(core))
		client, err := factory(core).RESTClient(corev1.SchemeGroupVersion)
		require.NoError(t, err)
		created := &corev1.Secret{}
		require.NoError(t, client.Post().Namespace("default").Resource("secrets").Body(secret).Do(t.Context()).Into(created))
		assert.Equal(t, "token", created.Name, "the answer, decoded into a typed Secret")
		assert.Equal(t, []byte("v"), created.Data["k"])
		assert.NotEmpty(t, created.ResourceVersion, "the server's answer, not the body sent")

		_, err = factory(nil).RESTClient(corev1.SchemeGroupVersion)
		assert.ErrorContains(t, err, "needs FactoryOptions.Scheme")
	})
}
