package main

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// roundTripFunc lets a test see (or refuse) each request the skeleton sends.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// runControl runs control on cfg with see called for each request it
// sends, until the test ends.
func runControl(t *testing.T, cfg *rest.Config, ns string, see func(*http.Request) *http.Response) {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if resp := see(r); resp != nil {
				return resp, nil
			}
			return rt.RoundTrip(r)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- control(ctx, cfg, ns, nil) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
}

// Found by a review. The Secret of an earlier web, with a finalizer someone
// else's controller has yet to remove, and a labelled web made anew.
// ownerGone says the Secret's owners are gone; the DELETE is answered
// 202, the Secret only terminating (deletionTimestamp set, still in the
// cache), and the reconcile returns RequeueAfter 1 ms. The guard sees
// the delete at once (the cache holds the Secret terminating at the
// answered resourceVersion), so 1 ms later the key is reconciled again:
// the Secret is still there and still ownerGone, another DELETE, another
// 1 ms requeue, for as long as the finalizer stays, on the client's token
// bucket that every informer and every other key's writes share.
// Passing: a Secret already terminating is not deleted again and again
// (the key waits for its delete event), and web gets its own Secret once
// it is gone. The real control plane, for the finalizer.
func TestATerminatingSecretOfAnEarlierConfigMapIsNotDeletedAgainInALoop(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	s := &server{t: t, client: client, ns: ns}
	s.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}}, Data: map[string]string{"k": "new"}})
	web := s.configMap("web")
	yes := true
	require.NoError(t, client.Post().Namespace(ns).Resource("secrets").Body(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}, Finalizers: []string{"example.com/hold"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "web", UID: "an-earlier-web", Controller: &yes}}},
		Data: map[string][]byte{"k": []byte("old")}}).Do(t.Context()).Error())
	release := func() {
		_ = client.Patch(types.MergePatchType).Namespace(ns).Resource("secrets").Name("web").
			Body([]byte(`{"metadata":{"finalizers":null}}`)).Do(context.Background()).Error()
	}
	t.Cleanup(release)

	var deletes atomic.Int64
	runControl(t, cp.Config(), ns, func(r *http.Request) *http.Response {
		if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/secrets/web") {
			deletes.Add(1)
		}
		return nil
	})
	s.eventually("the earlier web's Secret is terminating", func() bool {
		secret := s.secret("web")
		return secret != nil && secret.DeletionTimestamp != nil
	})
	before := deletes.Load()
	time.Sleep(2 * time.Second)
	n := deletes.Load() - before
	require.LessOrEqual(t, n, int64(3), "the skeleton sent %d DELETEs of one terminating Secret in 2 s", n)

	release()
	s.eventually("web gets its own Secret once the earlier one is gone", func() bool {
		secret := s.secret("web")
		return secret != nil && controllerUID(secret) == web.UID && string(secret.Data["k"]) == "new"
	})
}
