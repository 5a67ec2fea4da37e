package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Someone made the skeleton's Secret immutable (immutable: true), then
// its ConfigMap's data changed. kube-apiserver refuses any change to an
// immutable Secret's data (422 Invalid, "field is immutable when
// `immutable` is set") and to its immutable field, so no update can
// ever put it right: the skeleton deletes that Secret, by its UID, and
// in the same reconcile creates a new one with the new data.
// Before, the update was retried with backoff for ever. The real control
// plane, because fakeapiserver does not model immutable Secrets (it
// stores the field and lets the data change).
func TestAnImmutableSecretWhoseConfigMapChangedIsDeletedAndMadeAnew(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	log := logTo(t)
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "a"}})
	startRun(t, cp, ns)
	s.eventually("a Secret for the ConfigMap", func() bool { return s.secretData("web")["k"] == "a" })

	frozen := s.secret("web")
	yes := true
	frozen.Immutable = &yes
	require.NoError(t, client.Put().Namespace(ns).Resource("secrets").Name("web").Body(frozen).Do(t.Context()).Into(frozen))
	cm := s.configMap("web")
	cm.Data = map[string]string{"k": "b"}
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("web").Body(cm).Do(t.Context()).Error())

	s.eventually("the immutable Secret is made anew with the ConfigMap's new data", func() bool { return s.secretData("web")["k"] == "b" })
	remade := s.secret("web")
	assert.NotEqual(t, frozen.UID, remade.UID, "a new Secret")
	assert.Equal(t, cm.UID, controllerUID(remade), "controlled by the ConfigMap")
	assert.NotContains(t, log.String(), "giving up", "no key was given up on")
}
