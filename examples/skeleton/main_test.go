package main

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

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m, testenv.Options{})
	removeBinary()
	os.Exit(code)
}

// The skeleton against the real control plane: Secrets appear for the
// labelled ConfigMaps only, follow their updates, are put back when
// someone else changes them, and vanish with their ConfigMap or its label.
func TestSecretsFollowTheirConfigMapsAndVanishWithThem(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "1"}})

	ctx, stop := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() {
		returned <- run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns})
	}()
	defer func() {
		stop()
		select {
		case err := <-returned:
			assert.NoError(t, err, "a shutdown is not a failure")
		case <-time.After(30 * time.Second):
			t.Error("run did not return after its context ended")
		}
	}()

	s.eventually("a Secret for a ConfigMap that existed before the start", func() bool { return s.secretData("before")["k"] == "1" })

	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "a"}})
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string]string{"k": "x"}})
	s.eventually("a Secret for a new labelled ConfigMap", func() bool { return s.secretData("web")["k"] == "a" })
	secret := s.secret("web")
	require.NotNil(t, metav1.GetControllerOf(secret))
	assert.Equal(t, "web", metav1.GetControllerOf(secret).Name, "owned by its ConfigMap")

	cm := s.configMap("web")
	cm.Data = map[string]string{"k": "b", "extra": "c"}
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("web").Body(cm).Do(t.Context()).Error())
	s.eventually("the Secret follows an update", func() bool {
		d := s.secretData("web")
		return d["k"] == "b" && d["extra"] == "c"
	})

	tampered := s.secret("web")
	tampered.Data = map[string][]byte{"k": []byte("tampered")}
	require.NoError(t, client.Put().Namespace(ns).Resource("secrets").Name("web").Body(tampered).Do(t.Context()).Error())
	s.eventually("a Secret changed by someone else is put right", func() bool { return s.secretData("web")["k"] == "b" })

	require.NoError(t, client.Delete().Namespace(ns).Resource("configmaps").Name("web").Do(t.Context()).Error())
	s.eventually("the Secret vanishes with its ConfigMap", func() bool { return s.secret("web") == nil })

	unlabelled := s.configMap("before")
	unlabelled.Labels = nil
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("before").Body(unlabelled).Do(t.Context()).Error())
	s.eventually("the Secret vanishes when its ConfigMap loses the label", func() bool { return s.secret("before") == nil })
	assert.Nil(t, s.secret("other"), "an unlabelled ConfigMap never had a Secret")
}

// server reads and writes the test's namespace directly, never through
// the controller's caches.
type server struct {
	t      *testing.T
	client *rest.RESTClient
	ns     string
}

func (s *server) create(cm *corev1.ConfigMap) {
	require.NoError(s.t, s.client.Post().Namespace(s.ns).Resource("configmaps").Body(cm).Do(s.t.Context()).Error())
}

func (s *server) configMap(name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	require.NoError(s.t, s.client.Get().Namespace(s.ns).Resource("configmaps").Name(name).Do(s.t.Context()).Into(cm))
	return cm
}

// secret returns the named Secret, or nil if the server has none.
func (s *server) secret(name string) *corev1.Secret {
	secret := &corev1.Secret{}
	err := s.client.Get().Namespace(s.ns).Resource("secrets").Name(name).Do(s.t.Context()).Into(secret)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(s.t, err)
	return secret
}

func (s *server) secretData(name string) map[string]string {
	out := map[string]string{}
	if secret := s.secret(name); secret != nil {
		for k, v := range secret.Data {
			out[k] = string(v)
		}
	}
	return out
}

func (s *server) eventually(what string, cond func() bool) {
	s.t.Helper()
	require.Eventually(s.t, cond, 30*time.Second, 50*time.Millisecond, what)
}
