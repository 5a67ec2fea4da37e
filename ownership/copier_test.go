package ownership_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/ownership"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// copier keeps a copy of each ConfigMap of namespace from in every
// namespace of to: children an owner reference cannot reach, marked with
// an ownership.Mark instead.
type copier struct {
	mark     ownership.Mark
	owners   *si.Informer[*corev1.ConfigMap]
	children *si.Informer[*corev1.ConfigMap] // every ConfigMap, ours or not, so a user's is seen before any create
	client   *rest.RESTClient
	to       []string
	refused  atomic.Int64 // reconciles that found a user's ConfigMap of a copy's name
}

func (c *copier) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	owner, err := c.owners.Lister().Namespace(key.Namespace).Get(key.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return workqueue.Result{}, err
	}
	// No garbage collector follows the marks, so we delete what the owner
	// does not want: every copy of a gone owner; of one that exists, an
	// earlier owner's of its name and those outside its targets.
	children, err := c.children.Indexer().ByIndex(ownership.OwnerIndex, key.String())
	if err != nil {
		return workqueue.Result{}, err
	}
	for _, child := range children {
		if owner == nil || !c.mark.Owns(owner, child) || !slices.Contains(c.to, child.Namespace) {
			if err := c.delete(ctx, child); err != nil {
				return workqueue.Result{}, err
			}
		}
	}
	if owner == nil {
		return workqueue.Result{}, nil
	}
	for _, ns := range c.to {
		child, err := c.children.Lister().Namespace(ns).Get(owner.Name)
		switch {
		case apierrors.IsNotFound(err):
			copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: owner.Name, Namespace: ns}, Data: owner.Data}
			if err := c.mark.Set(copied, owner); err != nil {
				return workqueue.Result{}, err
			}
			err = c.client.Post().Namespace(ns).Resource("configmaps").Body(copied).Do(ctx).Error()
			if err != nil {
				return workqueue.Result{}, err // AlreadyExists too: our cache is behind; the retry reads it
			}
		case err != nil:
			return workqueue.Result{}, err
		case c.mark.Owns(owner, child):
			if !maps.Equal(child.Data, owner.Data) {
				fixed := child.DeepCopy()
				fixed.Data = owner.Data
				if err := c.client.Put().Namespace(ns).Resource("configmaps").Name(child.Name).Body(fixed).Do(ctx).Error(); err != nil {
					return workqueue.Result{}, err
				}
			}
		default:
			if k, _, ours := c.mark.Owner(child); ours && k == key { // an earlier owner's copy, deleted above: make ours next
				return workqueue.Result{RequeueAfter: time.Millisecond}, nil
			}
			c.refused.Add(1) // a user's, or our copy of another owner: leave it (a controller would record an Event)
		}
	}
	return workqueue.Result{}, nil
}

// delete deletes child, that object and no newer one of its name.
func (c *copier) delete(ctx context.Context, child *corev1.ConfigMap) error {
	opts := &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(child.UID))}
	err := c.client.Delete().Namespace(child.Namespace).Resource("configmaps").Name(child.Name).Body(opts).Do(ctx).Error()
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone already, or a newer object: not ours to delete
		return nil
	}
	return err
}

func startCopier(t *testing.T, cfg *rest.Config, from string, to ...string) *copier {
	ctx, cancel := context.WithCancel(t.Context())
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	c := &copier{mark: must(ownership.New("copier")), to: to, client: must(factory.RESTClient(corev1.SchemeGroupVersion))}
	c.owners = must(si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(from)))
	c.children = must(si.InformerFor[*corev1.ConfigMap](ctx, factory,
		si.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{ownership.OwnerIndex: ownership.Index[*corev1.ConfigMap](c.mark)})))
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	must(c.owners.AddEventHandler(si.EnqueueKey[*corev1.ConfigMap](queue)))
	must(c.children.AddEventHandler(ownership.Enqueue[*corev1.ConfigMap](queue, c.mark)))
	factory.Start(ctx)
	require.NoError(t, factory.WaitForCacheSync(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		workqueue.Run(ctx, queue, c.reconcile, workqueue.RunOptions[informer.Key]{Workers: 2, OnError: func(informer.Key, error) {}})
	})
	t.Cleanup(func() { cancel(); queue.ShutDown(); wg.Wait(); factory.Wait() })
	return c
}

// Copies in other namespaces than their owner: made, kept in line,
// made again when deleted by hand, deleted with their owner, and a
// user's ConfigMap of a copy's name left as it is, known as not ours from
// the cache, not from an AlreadyExists.
func TestCopiesInOtherNamespacesFollowTheirOwnerAndAUsersObjectIsLeftAlone(t *testing.T) {
	cp := testenv.Shared(t)
	from, a, b := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	core := must(testenv.CoreV1Client(cp.Config()))
	get := func(ns, name string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{}
		if err := core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(t.Context()).Into(cm); err != nil {
			require.True(t, apierrors.IsNotFound(err), "%v", err)
			return nil
		}
		return cm
	}
	users := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: b}, Data: map[string]string{"k": "users"}}
	require.NoError(t, core.Post().Namespace(b).Resource("configmaps").Body(users).Do(t.Context()).Into(users))
	c := startCopier(t, cp.Config(), from, a, b)

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: from}, Data: map[string]string{"k": "v1"}}
	require.NoError(t, core.Post().Namespace(from).Resource("configmaps").Body(owner).Do(t.Context()).Into(owner))
	eventually := func(what string, cond func() bool) {
		require.Eventually(t, cond, time.Minute, 20*time.Millisecond, what)
	}
	eventually("a copy in a", func() bool { cm := get(a, "settings"); return cm != nil && cm.Data["k"] == "v1" })
	eventually("the user's ConfigMap in b found not ours", func() bool { return c.refused.Load() > 0 })
	assert.Equal(t, "users", get(b, "settings").Data["k"], "the user's ConfigMap is not changed")
	assert.True(t, c.mark.Owns(owner, get(a, "settings")))

	owner.Data["k"] = "v2"
	require.NoError(t, core.Put().Namespace(from).Resource("configmaps").Name("settings").Body(owner).Do(t.Context()).Into(owner))
	eventually("the copy follows its owner", func() bool { cm := get(a, "settings"); return cm != nil && cm.Data["k"] == "v2" })

	first := get(a, "settings")
	require.NoError(t, core.Delete().Namespace(a).Resource("configmaps").Name("settings").Do(t.Context()).Error())
	eventually("a copy deleted by hand is made again", func() bool { cm := get(a, "settings"); return cm != nil && cm.UID != first.UID })

	require.NoError(t, core.Delete().Namespace(from).Resource("configmaps").Name("settings").Do(t.Context()).Error())
	eventually("the copy goes with its owner", func() bool { return get(a, "settings") == nil })
	assert.Equal(t, "users", get(b, "settings").Data["k"], "the user's ConfigMap stays when the owner goes")
}

// A controller that was down while an owner was deleted and made anew
// under its name finds, at start, a copy marked for the earlier owner's
// UID: its own, but not this owner's. It replaces it.
func TestACopyLeftByAnEarlierOwnerOfTheSameNameIsReplaced(t *testing.T) {
	cp := testenv.Shared(t)
	from, a := cp.Namespace(t), cp.Namespace(t)
	core := must(testenv.CoreV1Client(cp.Config()))
	mark := must(ownership.New("copier"))
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: from, UID: "0ld-0wner"}}
	left := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: a}, Data: map[string]string{"k": "old"}}
	require.NoError(t, mark.Set(left, earlier))
	require.NoError(t, core.Post().Namespace(a).Resource("configmaps").Body(left).Do(t.Context()).Into(left))
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: from}, Data: map[string]string{"k": "new"}}
	require.NoError(t, core.Post().Namespace(from).Resource("configmaps").Body(owner).Do(t.Context()).Into(owner))

	c := startCopier(t, cp.Config(), from, a)
	require.Eventually(t, func() bool {
		cm := &corev1.ConfigMap{}
		err := core.Get().Namespace(a).Resource("configmaps").Name("settings").Do(t.Context()).Into(cm)
		return err == nil && cm.UID != left.UID && cm.Data["k"] == "new" && c.mark.Owns(owner, cm)
	}, time.Minute, 20*time.Millisecond, "the earlier owner's copy replaced by this owner's")
	assert.Zero(t, c.refused.Load(), "the earlier owner's copy is ours, not a user's")
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}
