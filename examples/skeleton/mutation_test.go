package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// The skeleton changes a DeepCopy, never an object its listers return
// (pitfall 2). Its two informers run with the cache's mutation detector:
// the test's factory asks for them first, WithMutationDetection, and
// control's own requests, of the same scope, share them. After every
// reconcile (each Done the queue traces) both caches are compared with
// the copies taken when their objects were stored. The Secret starts out
// with the wrong data, so the reconcile fixes it, and the first PUT
// fails, so a changed cache would also outlive the reconcile that changed
// it.
func TestTheSkeletonsReconcileNeverModifiesAnObjectFromItsCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var puts atomic.Int32
		mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/secrets/") && puts.Add(1) == 1 {
				return fakeapiserver.Fault{Status: http.StatusInternalServerError}
			}
			return fakeapiserver.Fault{}
		}))
		defer mem.Close()
		client, err := testenv.CoreV1Client(mem.Config())
		require.NoError(t, err)
		cm := &corev1.ConfigMap{}
		require.NoError(t, client.Post().Namespace("default").Resource("configmaps").Body(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}},
			Data:       map[string]string{"k": "v"}}).Do(t.Context()).Into(cm))
		owner := metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		require.NoError(t, client.Post().Namespace("default").Resource("secrets").Body(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "demo"}, OwnerReferences: []metav1.OwnerReference{*owner}},
			Data:       map[string][]byte{"k": []byte("wrong")}}).Do(t.Context()).Error())

		var checks []func() error // each informer's CheckMutations; set before control's first reconcile
		newFactory = func(cfg *rest.Config, opts si.FactoryOptions) (*si.Factory, error) {
			f, err := si.NewFactory(cfg, opts)
			if err != nil {
				return nil, err
			}
			cms, err1 := si.InformerFor[*corev1.ConfigMap](t.Context(), f, si.InNamespace("default"), si.WithLabels("app=demo"), si.WithMutationDetection())
			secrets, err2 := si.InformerFor[*corev1.Secret](t.Context(), f, si.InNamespace("default"), si.WithLabels("app=demo"), si.WithMutationDetection())
			checks = []func() error{cms.Indexer().CheckMutations, secrets.Indexer().CheckMutations}
			return f, errors.Join(err1, err2)
		}
		defer func() { newFactory = si.NewFactory }()
		var mu sync.Mutex
		var reconciles int
		var mutated []error // guarded by mu
		afterEachReconcile := func(e informer.TraceEvent) {
			if e.Kind != workqueue.KindDone {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			reconciles++
			for _, check := range checks {
				if err := check(); err != nil {
					mutated = append(mutated, err)
				}
			}
		}

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- control(ctx, mem.Config(), "default", afterEachReconcile) }()
		time.Sleep(time.Minute) // simulated: the failed fix, its retry and the watch events after
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		got := &corev1.Secret{}
		require.NoError(t, client.Get().Namespace("default").Resource("secrets").Name("web").Do(context.Background()).Into(got))
		require.Equal(t, "v", string(got.Data["k"]), "the Secret was fixed")
		require.GreaterOrEqual(t, puts.Load(), int32(2), "the fix failed once and ran again")
		mu.Lock()
		defer mu.Unlock()
		require.Greater(t, reconciles, 1)
		require.Empty(t, mutated, "a reconcile changed an object of the cache")
	})
}
