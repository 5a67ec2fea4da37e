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

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/expectations"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// startController runs this example's controller on ns with expectations
// that are assumed lost after ttl, until the test ends.
func startController(t *testing.T, cp *testenv.ControlPlane, ns string, ttl time.Duration) *controller {
	t.Helper()
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cp.Config(), scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns})
	require.NoError(t, err)
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, Resource: corev1.Resource("configmaps")})
	require.NoError(t, err)
	c := &controller{client: client, ns: ns, cms: inf.Lister(), log: &logger{out: &bytes.Buffer{}},
		queue: workqueue.New(workqueue.Options[informer.Key]{}),
		exp:   expectations.New[informer.Key](expectations.Options{TTL: ttl})}
	reg, err := inf.AddEventHandler(c.handler(), sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = inf.Run(ctx); done <- struct{}{} }()
	go func() {
		workqueue.Run(ctx, c.queue, c.reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})
		done <- struct{}{}
	}()
	t.Cleanup(func() { cancel(); <-done; <-done })
	waitCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	require.NoError(t, sharedinformer.WaitForCacheSync(waitCtx, reg))
	return c
}

// A lost event (here: a creation expected that will never be observed)
// holds a parent back only until its expectation's TTL ends; then the
// controller looks again by itself, with no other event to prompt it.
func TestALostEventCannotBlockAKeyForever(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	c := startController(t, cp, ns, time.Second)
	key := informer.Key{Namespace: ns, Name: "parent"}
	c.exp.ExpectCreations(key, 1) // a create whose event was lost

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
	}, 15*time.Second, 20*time.Millisecond, "the parent's children were never created: the key is stuck behind a lost expectation")
}
