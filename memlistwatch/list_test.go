package memlistwatch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
)

// Every watch goroutine ends with its watch.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCollection(t *testing.T, names ...string) *memlistwatch.ListerWatcher[*corev1.ConfigMap] {
	t.Helper()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	for _, name := range names {
		_, err := lw.Create(configMap(name))
		require.NoError(t, err)
	}
	return lw
}

func TestWritesTakeConsecutiveResourceVersions(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	assert.Equal(t, "1", lw.ResourceVersion(), "an untouched collection")
	a, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	assert.Equal(t, "2", a.ResourceVersion)
	a, err = lw.Update(a)
	require.NoError(t, err)
	assert.Equal(t, "3", a.ResourceVersion)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	assert.Equal(t, "4", lw.ResourceVersion())
}

func TestWritesFailLikeTheAPIServer(t *testing.T) {
	lw := newCollection(t, "a")
	_, err := lw.Create(configMap("a"))
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	_, err = lw.Update(configMap("missing"))
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	err = lw.Delete(informer.Key{Namespace: "default", Name: "missing"})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	var nilMap *corev1.ConfigMap
	_, err = lw.Create(nilMap)
	assert.Error(t, err, "a typed nil is refused, not dereferenced")
	assert.Equal(t, "2", lw.ResourceVersion(), "failed writes take no resourceVersion")
}

func TestObjectsHandedOutAreCopies(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	mine := configMap("a")
	created, err := lw.Create(mine)
	require.NoError(t, err)
	assert.Empty(t, mine.ResourceVersion, "the caller's object is not touched")
	created.Data = map[string]string{"changed": "locally"}
	items, _, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Empty(t, items[0].Data, "changing a returned object does not change the collection")
}

func TestListPagesShowOneStateWhileTheCollectionChanges(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b", "c", "d", "e")
	first, meta, err := lw.List(ctx, metav1.ListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"default/a", "default/b"}, keys(first))
	require.NotEmpty(t, meta.Continue)

	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "c"}))
	_, err = lw.Create(configMap("f"))
	require.NoError(t, err)

	var rest []*corev1.ConfigMap
	for token := meta.Continue; token != ""; {
		page, pm, err := lw.List(ctx, metav1.ListOptions{Limit: 2, Continue: token})
		require.NoError(t, err)
		assert.Equal(t, meta.ResourceVersion, pm.ResourceVersion, "every page is at the first page's resourceVersion")
		rest = append(rest, page...)
		token = pm.Continue
	}
	assert.Equal(t, []string{"default/c", "default/d", "default/e"}, keys(rest),
		"the deleted c is still there and the new f is not: the pages show the state at the list's resourceVersion")
	assert.Equal(t, 3, lw.Stats().Lists, "one request per page")
}

func TestContinueTokenFromACompactedListAnswers410(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b", "c")
	_, meta, err := lw.List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	_, err = lw.Create(configMap("d"))
	require.NoError(t, err)
	lw.Compact()

	_, _, err = lw.List(ctx, metav1.ListOptions{Limit: 1, Continue: meta.Continue})
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
}

func TestListWithContinueAndResourceVersionIsABadRequest(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b")
	_, meta, err := lw.List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	_, _, err = lw.List(ctx, metav1.ListOptions{Limit: 1, Continue: meta.Continue, ResourceVersion: "2"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
	_, _, err = lw.List(ctx, metav1.ListOptions{Continue: "garbage"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
}

func TestListWithContinueAndResourceVersionZeroIsAccepted(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b")
	_, meta, err := lw.List(ctx, metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	items, _, err := lw.List(ctx, metav1.ListOptions{Limit: 1, Continue: meta.Continue, ResourceVersion: "0"})
	require.NoError(t, err, "kube-apiserver accepts resourceVersion 0 beside a continue token")
	assert.Equal(t, []string{"default/b"}, keys(items))
}

// kube-apiserver reads a paged LIST at resourceVersion N (no
// resourceVersionMatch) exactly at N, as if Exact had been asked.
func TestPagedListAtAResourceVersionIsAnExactRead(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b")
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	paged := metav1.ListOptions{ResourceVersion: "3", Limit: 10}

	items, meta, err := lw.List(ctx, paged)
	require.NoError(t, err)
	assert.Equal(t, []string{"default/a", "default/b"}, keys(items), "the state at 3, a not yet deleted")
	assert.Equal(t, "3", meta.ResourceVersion)

	lw.Compact()
	_, _, err = lw.List(ctx, paged)
	assert.True(t, apierrors.IsResourceExpired(err), "410 once 3 is compacted: %v", err)
}

func TestListFromTheFutureAnswersTooLargeResourceVersion(t *testing.T) {
	lw := newCollection(t, "a")
	_, _, err := lw.List(context.Background(), metav1.ListOptions{ResourceVersion: "99"})
	require.Error(t, err)
	assert.True(t, apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge), "%v", err)
	assert.True(t, apierrors.IsTimeout(err), "kube-apiserver answers 504: %v", err)
}

func TestExactListShowsThePastUntilCompacted(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b")
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	exact := metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}

	items, meta, err := lw.List(ctx, exact)
	require.NoError(t, err)
	assert.Equal(t, []string{"default/a", "default/b"}, keys(items))
	assert.Equal(t, "3", meta.ResourceVersion)

	items, meta, err = lw.List(ctx, metav1.ListOptions{ResourceVersion: "3"})
	require.NoError(t, err)
	assert.Equal(t, []string{"default/b"}, keys(items), "NotOlderThan (the default) answers the latest state")
	assert.Equal(t, "4", meta.ResourceVersion)

	lw.Compact()
	_, _, err = lw.List(ctx, exact)
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)
}

func TestSelectorsAreRefusedRatherThanIgnored(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a")
	_, _, err := lw.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
	_, err = lw.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=a"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
}
