package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// onFake starts a fakeapiserver in memory, with namespace "demo", and
// this example's controller on it, for a test of at most a minute.
func onFake(t *testing.T) (*rest.RESTClient, context.Context, func() *controller) {
	t.Helper()
	mem := fakeapiserver.ServeInMemory(fakeapiserver.New())
	t.Cleanup(mem.Close)
	client, err := testenv.CoreV1Client(mem.Config())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	require.NoError(t, client.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}).Do(ctx).Error())
	return client, ctx, func() *controller { return startControllerOn(t, mem.Config(), "demo", 0) }
}

// childrenOn lists, on the server, the ConfigMaps labelled as children of
// parent.
func childrenOn(ctx context.Context, t *testing.T, client *rest.RESTClient, parent string) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").
		VersionedParams(&metav1.ListOptions{LabelSelector: roleLabel + "=child," + parentLabel + "=" + parent}, metav1.ParameterCodec).
		Do(ctx).Into(&list))
	return list.Items
}

// controlledBy counts the children whose controller is the object of uid.
func controlledBy(children []corev1.ConfigMap, uid types.UID) int {
	n := 0
	for _, c := range children {
		if ref := metav1.GetControllerOf(&c); ref != nil && ref.UID == uid {
			n++
		}
	}
	return n
}

func createParent(ctx context.Context, t *testing.T, client *rest.RESTClient, name, replicas string) *corev1.ConfigMap {
	t.Helper()
	parent := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{roleLabel: "parent"}},
		Data:       map[string]string{"replicas": replicas, "value": "v"},
	}).Do(ctx).Into(parent))
	return parent
}

// A ConfigMap someone labelled role=child,parent=web by hand carries no
// controller reference of web's: it is not web's child. The controller
// neither counts it, nor changes its data, nor deletes it with web; web
// gets a child of its own.
func TestAUsersConfigMapLabelledAsAChildIsNeitherCountedNorChangedNorDeleted(t *testing.T) {
	client, ctx, start := onFake(t)
	users := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "users", Labels: map[string]string{roleLabel: "child", parentLabel: "web"}},
		Data:       map[string]string{"mine": "yes"},
	}).Do(ctx).Into(users))
	web := createParent(ctx, t, client, "web", "1")
	start()

	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1 },
		10*time.Second, 10*time.Millisecond, "web never got a child of its own: the user's ConfigMap was counted as one")
	got := &corev1.ConfigMap{}
	require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").Name("users").Do(ctx).Into(got))
	assert.Equal(t, map[string]string{"mine": "yes"}, got.Data, "the user's ConfigMap was overwritten")

	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("web").Do(ctx).Error())
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 0 },
		10*time.Second, 10*time.Millisecond, "web's own child outlived it")
	got = &corev1.ConfigMap{}
	err := client.Get().Namespace("demo").Resource("configmaps").Name("users").Do(ctx).Into(got)
	require.False(t, apierrors.IsNotFound(err), "the user's ConfigMap was deleted with web")
	require.NoError(t, err)
	assert.Equal(t, users.UID, got.UID)
}

// Children left by an earlier parent of the same name (deleted while the
// controller was down, or on a cluster without a garbage collector) are
// controlled by that parent's UID, not the new one's: the new parent
// does not adopt them. They are deleted, and it gets children of its own.
func TestChildrenOfAnEarlierParentOfTheSameNameAreDeletedAndTheNewParentGetsItsOwn(t *testing.T) {
	client, ctx, start := onFake(t)
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-of-an-earlier-web"}}
	for range 2 {
		require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Labels: map[string]string{roleLabel: "child", parentLabel: "web"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(earlier, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
			Data: map[string]string{"value": "v"},
		}).Do(ctx).Error())
	}
	web := createParent(ctx, t, client, "web", "2") // made anew while the controller was down
	start()

	require.Eventually(t, func() bool {
		children := childrenOn(ctx, t, client, "web")
		return len(children) == 2 && controlledBy(children, web.UID) == 2
	}, 10*time.Second, 10*time.Millisecond, "web adopted the children of an earlier web, or kept them beside its own")
}

// A ConfigMap is a parent while it is labelled role=parent. One that
// loses the label is no parent any more: its children are deleted, as
// when it is deleted, and nothing is written into it again.
func TestAParentThatLosesItsLabelLosesItsChildren(t *testing.T) {
	client, ctx, start := onFake(t)
	start()
	web := createParent(ctx, t, client, "web", "1")
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1 },
		10*time.Second, 10*time.Millisecond)

	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"metadata":{"labels":{"role":null}}}`)).Do(ctx).Error())
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 0 },
		10*time.Second, 10*time.Millisecond, "the children outlived their parent's label")
}

// createKept creates a ConfigMap keeper, a parent web asking for replicas
// children, and web's child kept, which keeper also owns (a second,
// non-controller owner reference), labelled as web's child and with
// extra "key=value" labels; it returns web and keeper.
func createKept(ctx context.Context, t *testing.T, client *rest.RESTClient, replicas string, extra ...string) (web, keeper *corev1.ConfigMap) {
	t.Helper()
	keeper = &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}).Do(ctx).Into(keeper))
	web = createParent(ctx, t, client, "web", replicas)
	labels := map[string]string{roleLabel: "child", parentLabel: "web"}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = v
	}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(web, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID},
			}},
		Data: map[string]string{"value": "v"},
	}).Do(ctx).Error())
	return web, keeper
}
