package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/listwatch/informer/testenv"
)

func TestConfigMapCanBeCreatedReadListedAndWatched(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())

	created := createConfigMap(ctx, t, client, ns, "first")
	assert.NotEmpty(t, created.ResourceVersion, "the server assigns a resourceVersion")

	got := &corev1.ConfigMap{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Name("first").Do(ctx).Into(got))
	assert.Equal(t, map[string]string{"k": "v"}, got.Data)

	list := &corev1.ConfigMapList{}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Into(list))
	require.Len(t, list.Items, 1)
	assert.Equal(t, "first", list.Items[0].Name)

	// Watch from the list's resourceVersion: only what happens after it.
	w, err := watchConfigMaps(ctx, client, ns, list.ResourceVersion)
	require.NoError(t, err)
	defer w.Stop()
	second := createConfigMap(ctx, t, client, ns, "second")
	ev := nextEvent(t, w, hangGuard)
	assert.Equal(t, watch.Added, ev.Type)
	require.IsType(t, &corev1.ConfigMap{}, ev.Object)
	assert.Equal(t, "second", ev.Object.(*corev1.ConfigMap).Name)
	assert.Equal(t, second.ResourceVersion, ev.Object.(*corev1.ConfigMap).ResourceVersion)
}

func TestWatchFromACompactedResourceVersionAnswers410Expired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Without the watch cache, etcd itself serves the watch, and etcd
	// cannot replay history it has compacted away.
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())

	// A watch from old asks for every event after it, starting with
	// newer's. Compaction at newest's revision keeps newest's event but
	// discards newer's, so that watch cannot be served.
	old := createConfigMap(ctx, t, client, ns, "old")
	createConfigMap(ctx, t, client, ns, "newer")
	newest := createConfigMap(ctx, t, client, ns, "newest")
	rev, err := cp.Compact(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, rev, mustParseRV(t, newest.ResourceVersion))

	w, err := watchConfigMaps(ctx, client, ns, old.ResourceVersion)
	require.NoError(t, err, "the watch request itself succeeds; the 410 arrives as an event")
	defer w.Stop()
	ev := nextEvent(t, w, hangGuard)
	require.Equal(t, watch.Error, ev.Type, "got %v %T", ev.Type, ev.Object)
	status := apierrors.FromObject(ev.Object)
	assert.True(t, apierrors.IsResourceExpired(status) || apierrors.IsGone(status), "status: %v", status)
	require.IsType(t, &metav1.Status{}, ev.Object)
	s := ev.Object.(*metav1.Status)
	assert.EqualValues(t, 410, s.Code)
	assert.Equal(t, metav1.StatusReasonExpired, s.Reason)
}

func TestRestartKeepsDataAndEndsOpenWatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Private(t, testenv.Options{})
	ns := cp.Namespace(t)
	client := coreClient(t, cp.Config())
	created := createConfigMap(ctx, t, client, ns, "survivor")

	w, err := watchConfigMaps(ctx, client, ns, created.ResourceVersion)
	require.NoError(t, err)
	defer w.Stop()

	restarted := time.Now()
	require.NoError(t, cp.Restart(ctx))
	t.Logf("restart took %v", time.Since(restarted))

	// The open watch must end (or report an error), not hang.
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			assert.Equal(t, watch.Error, ev.Type, "a watch across a restart may only end or report an error")
		}
	case <-time.After(hangGuard):
		t.Fatalf("the watch opened before the restart still hangs %v after it", hangGuard)
	}

	t.Logf("the watch ended %v after the restart began", time.Since(restarted))

	// The same client reconnects, and the data is still there.
	got := &corev1.ConfigMap{}
	require.Eventually(t, func() bool {
		return client.Get().Namespace(ns).Resource("configmaps").Name("survivor").Do(ctx).Into(got) == nil
	}, hangGuard, 100*time.Millisecond)
	t.Logf("the old client read the object again %v after the restart began", time.Since(restarted))
	assert.Equal(t, created.UID, got.UID)
}

func TestAuditCountMatchesTheRequestsTheTestMade(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Private(t, testenv.Options{Audit: true})
	ns := cp.Namespace(t)
	cfg := cp.Config()
	cfg.UserAgent = "audit-count-test"
	client := coreClient(t, cfg)

	const creates, gets = 3, 5
	for i := range creates {
		createConfigMap(ctx, t, client, ns, "cm-"+string(rune('a'+i)))
	}
	for range gets {
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Name("cm-a").Do(ctx).Error())
	}
	require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Error())

	count := func(f testenv.RequestFilter) int {
		n, err := cp.CountRequests(ctx, f)
		require.NoError(t, err)
		return n
	}
	me := func(verb string) testenv.RequestFilter {
		return testenv.RequestFilter{Verb: verb, Resource: "configmaps", Namespace: ns, UserAgent: cfg.UserAgent}
	}
	assert.Equal(t, creates, count(me("create")))
	assert.Equal(t, gets, count(me("get")))
	assert.Equal(t, 1, count(me("list")))
	assert.Equal(t, creates+gets+1, count(testenv.RequestFilter{UserAgent: cfg.UserAgent}))
	assert.Zero(t, count(testenv.RequestFilter{UserAgent: "nobody-sent-this"}))
}

func TestCountRequestsWithoutAuditIsAnError(t *testing.T) {
	_, err := testenv.Shared(t).CountRequests(context.Background(), testenv.RequestFilter{})
	require.ErrorContains(t, err, "Options.Audit")
}

func TestKubeconfigWorksForAPlainClientGoProgram(t *testing.T) {
	cp := testenv.Shared(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath())
	require.NoError(t, err)
	client := coreClient(t, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	body, err := client.Get().AbsPath("/version").Do(ctx).Raw()
	require.NoError(t, err)
	assert.Contains(t, string(body), `"gitVersion": "v1.37.2"`, "kube-apiserver is linked with its real version")

	nsList := &corev1.NamespaceList{}
	require.NoError(t, client.Get().Resource("namespaces").Do(ctx).Into(nsList))
	assert.NotEmpty(t, nsList.Items)
}

func TestStopEndsBothProcessesAndIsIdempotent(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{})
	pids := cp.PIDs()
	require.Len(t, pids, 2)
	cp.Stop()
	cp.Stop()
	for _, pid := range pids {
		assert.False(t, processAlive(pid), "process %d still running after Stop", pid)
	}
	assert.NoDirExists(t, cp.Dir())
	assert.Error(t, cp.Restart(context.Background()))
}
