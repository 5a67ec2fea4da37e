package memlistwatch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// History after a compaction: an exact LIST at every resourceVersion from
// the compaction on shows the compacted state with the writes up to it
// applied, and a WATCH from the compaction replays exactly those writes.
func TestTheStateAtAResourceVersionIsTheCompactionPlusTheWritesUpToIt(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a", "b") // rv 2, 3
	a := configMap("a")
	a.Data = map[string]string{"v": "1"}
	_, err := lw.Update(a) // rv 4
	require.NoError(t, err)
	require.Equal(t, "4", lw.Compact())

	_, err = lw.Create(configMap("c")) // rv 5
	require.NoError(t, err)
	b := configMap("b")
	b.Data = map[string]string{"v": "2"}
	_, err = lw.Update(b) // rv 6
	require.NoError(t, err)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"})) // rv 7

	for _, tc := range []struct {
		rv   string
		want []string // name=data of each object, in key order
	}{
		{"4", []string{"a=map[v:1]", "b=map[]"}},
		{"5", []string{"a=map[v:1]", "b=map[]", "c=map[]"}},
		{"6", []string{"a=map[v:1]", "b=map[v:2]", "c=map[]"}},
		{"7", []string{"b=map[v:2]", "c=map[]"}},
	} {
		items, meta, err := lw.List(ctx, metav1.ListOptions{ResourceVersion: tc.rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		require.NoError(t, err, "rv %s", tc.rv)
		assert.Equal(t, tc.rv, meta.ResourceVersion)
		var got []string
		for _, obj := range items {
			got = append(got, fmt.Sprintf("%s=%v", obj.Name, obj.Data))
		}
		assert.Equal(t, tc.want, got, "the state at %s", tc.rv)
	}
	_, _, err = lw.List(ctx, metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	assert.True(t, apierrors.IsResourceExpired(err), "before the compaction: %v", err)

	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "4"})
	require.NoError(t, err)
	defer w.Stop()
	for _, want := range []string{"ADDED c@5", "MODIFIED b@6", "DELETED a@7"} {
		assert.Equal(t, want, describe(next(t, w)))
	}
}

// The objects a LIST or a watch event hands out are the caller's own:
// changing them changes nothing the collection stores or gives anyone
// else, whether the event is live, replayed or synthetic.
func TestObjectsReadFromAListOrAWatchAreCopies(t *testing.T) {
	ctx := context.Background()
	lw := newCollection(t, "a") // rv 2
	scribble := func(obj runtime.Object) {
		obj.(*corev1.ConfigMap).Data = map[string]string{"changed": "by a reader"}
	}
	pristine := func(obj runtime.Object, what string) {
		t.Helper()
		assert.Empty(t, obj.(*corev1.ConfigMap).Data, "%s sees a reader's change", what)
	}

	items, _, err := lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	scribble(items[0])
	synthetic, err := lw.Watch(ctx, metav1.ListOptions{}) // synthetic ADDED of a
	require.NoError(t, err)
	defer synthetic.Stop()
	scribble(next(t, synthetic).Object)

	live1, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	defer live1.Stop()
	live2, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	defer live2.Stop()
	_, err = lw.Create(configMap("b")) // rv 3
	require.NoError(t, err)
	scribble(next(t, live1).Object)
	pristine(next(t, live2).Object, "another watch")

	replay, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	defer replay.Stop()
	ev := next(t, replay)
	pristine(ev.Object, "a replay from history")
	scribble(ev.Object)

	items, _, err = lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, items, 2)
	for _, obj := range items {
		pristine(obj, "a later LIST")
	}
	again, err := lw.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer again.Stop()
	pristine(next(t, again).Object, "a later watch")
	pristine(next(t, again).Object, "a later watch")
}
