package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Someone made the skeleton's Secret immutable (immutable: true), then
// its ConfigMap's data changed. kube-apiserver refuses any change to an
// immutable Secret's data (422 Invalid, "field is immutable when
// `immutable` is set") and to its immutable field, so no update can put
// it right, and retrying one for ever only loads the server. Whoever
// made it immutable chose to; replacing it (a delete and a create) would
// undo that choice and, done by the skeleton, lose whatever else they
// put on it (two reviews found a co-owner's reference lost on the way).
// So the skeleton says so, in a Warning Event on the ConfigMap, and gives
// the key up: it comes back when either object changes. Deleted by hand,
// the Secret is made anew with the new data. The real control plane,
// because fakeapiserver does not model immutable Secrets (it stores the
// field and lets the data change).
func TestAnImmutableSecretWhoseDataIsOutOfDateIsReportedAndNotUpdatedForEver(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "a"}})
	var puts atomic.Int64
	runControl(t, cp.Config(), ns, func(r *http.Request) *http.Response {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/secrets/web") {
			puts.Add(1)
		}
		return nil
	})
	s.eventually("a Secret for the ConfigMap", func() bool { return s.secretData("web")["k"] == "a" })

	frozen := s.secret("web")
	yes := true
	frozen.Immutable = &yes
	require.NoError(t, client.Put().Namespace(ns).Resource("secrets").Name("web").Body(frozen).Do(t.Context()).Into(frozen))
	cm := s.configMap("web")
	cm.Data = map[string]string{"k": "b"}
	require.NoError(t, client.Put().Namespace(ns).Resource("configmaps").Name("web").Body(cm).Do(t.Context()).Error())

	s.eventually("a Warning Event says the Secret is immutable", func() bool {
		return s.warned("web", "SecretImmutable", "Secret web is immutable and its data is out of date")
	})
	before := puts.Load()
	time.Sleep(2 * time.Second) // a retry with backoff would have sent eight PUTs by now
	// One more may come from the Secret's own update (immutable: true),
	// if its event reached the skeleton only after the ConfigMap's.
	assert.LessOrEqual(t, puts.Load()-before, int64(1), "the refused update was sent again and again")
	assert.Equal(t, frozen.UID, s.secret("web").UID, "the immutable Secret is left as it is")

	require.NoError(t, client.Delete().Namespace(ns).Resource("secrets").Name("web").Do(t.Context()).Error())
	s.eventually("deleted by hand, the Secret is made anew with the ConfigMap's data", func() bool { return s.secretData("web")["k"] == "b" })
	assert.Equal(t, cm.UID, controllerUID(s.secret("web")), "controlled by the ConfigMap")
}
