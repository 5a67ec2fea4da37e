package reflector_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// listServedAsks runs a reflector of ConfigMaps, with Options.Served,
// against a server that answers every LIST with body (and every watch
// with a 500), until it has listed three times; it returns how often
// Served was asked.
func listServedAsks(t *testing.T, body string) int32 {
	t.Helper()
	var lists atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "" {
			http.Error(w, "no watch here", http.StatusInternalServerError)
			return
		}
		lists.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	lw := must(reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: srv.URL}, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns",
	}))
	var asked atomic.Int32
	served := func(context.Context) (reflector.Serving, error) {
		asked.Add(1)
		return reflector.Serving{Served: true}, nil
	}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{
		ListerWatcher: lw, Store: newRecorder[*corev1.ConfigMap](), OnError: (&errorLog{}).hook, Served: served})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	eventually(t, func() bool { return lists.Load() >= 3 }, "the list was not retried")
	cancel()
	<-done
	return asked.Load()
}

// TestAListedItemWithAFaultOfItsOwnDoesNotAskServed: an item that does
// not decode into T (a label value that is a number) says nothing of
// what the resource holds, so with Options.Served the list is retried
// without asking discovery whether it holds another kind (the package
// doc). Found by an adversarial hunt: every list decode error asked, one
// discovery request a retry.
func TestAListedItemWithAFaultOfItsOwnDoesNotAskServed(t *testing.T) {
	asked := listServedAsks(t, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[`+
		`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"4"}},`+
		`{"metadata":{"name":"b","namespace":"ns","resourceVersion":"5","labels":{"x":7}}}]}`)
	assert.Zero(t, asked, "an item with a fault of its own asked discovery whether the resource holds another kind")
}

// TestAListedItemOfAnotherKindThatDoesNotDecodeAsksServed: an item of
// another kind may fail to decode into T before its kind is read (a
// field of another type under the same name); its kind, read apart, still
// makes the reflector ask whether the resource holds another kind now.
func TestAListedItemOfAnotherKindThatDoesNotDecodeAsksServed(t *testing.T) {
	asked := listServedAsks(t, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[`+
		`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"5"},"data":7}]}`)
	assert.NotZero(t, asked, "an item of another kind did not ask discovery")
}
