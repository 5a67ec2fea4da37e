package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// startController runs this example's controller on ns, holding a key
// for its own writes for at most maxHold, until the test ends.
func startController(t *testing.T, cp *testenv.ControlPlane, ns string, maxHold time.Duration) *controller {
	t.Helper()
	return startControllerOn(t, cp.Config(), ns, maxHold)
}

// startControllerOn is startController on the API server cfg reaches (a
// fakeapiserver's, say).
func startControllerOn(t *testing.T, cfg *rest.Config, ns string, maxHold time.Duration) *controller {
	t.Helper()
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns})
	require.NoError(t, err)
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, Resource: corev1.Resource("configmaps")})
	require.NoError(t, err)
	c, err := newController(client, ns, inf, &logger{out: &bytes.Buffer{}}, maxHold)
	require.NoError(t, err)
	reg, err := inf.AddEventHandler(c.handler(), sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = inf.Run(ctx); done <- struct{}{} }()
	go func() {
		workqueue.Run(ctx, c.queue, c.reconcile, workqueue.RunOptions[informer.Key]{Gate: c.guard, OnError: func(informer.Key, error) {}})
		done <- struct{}{}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	waitCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	require.NoError(t, sharedinformer.WaitForCacheSync(waitCtx, reg))
	return c
}

// A write whose event never reaches the cache (here: one recorded at a
// resourceVersion the server will not reach soon) holds a parent back
// only for MaxHold; then the controller reconciles it anyway, on a cache
// that may be stale, rather than never.
func TestAWriteTheCacheNeverShowsCannotBlockAKeyForever(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	c := startController(t, cp, ns, time.Second)
	key := informer.Key{Namespace: ns, Name: "parent"}
	never := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost", ResourceVersion: "999999999999"}}
	require.NoError(t, c.writes.Wrote(key, never))

	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	parent := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "parent", Labels: map[string]string{roleLabel: "parent"}},
		Data:       map[string]string{"replicas": "2", "value": "v"},
	}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(t.Context()).Error())

	require.Eventually(t, func() bool {
		children := c.cms.Namespace(ns).List(labels.SelectorFromSet(labels.Set{roleLabel: "child", parentLabel: "parent"}))
		return len(children) == 2
	}, time.Minute, 20*time.Millisecond, "the parent's children were never created: the key is stuck behind a write the cache never shows") // MaxHold is 1 s: a minute is a hang guard
}
