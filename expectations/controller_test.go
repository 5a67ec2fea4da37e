package expectations_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/expectations"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// childMaker is the smallest controller with the read-after-write problem:
// every parent key must have exactly one child ConfigMap, labelled
// parent=<key>. Children get generated names, so the API server will
// happily accept a duplicate: only the controller can prevent one.
type childMaker struct {
	ns       string
	client   *rest.RESTClient
	children *sharedinformer.Informer[*corev1.ConfigMap]
	exp      *expectations.Expectations[string] // nil: the naive controller
	creates  atomic.Int32
}

func (c *childMaker) reconcile(ctx context.Context, parent string) (workqueue.Result, error) {
	if c.exp != nil && !c.exp.Satisfied(parent) {
		return workqueue.Result{}, nil // our own create is still on its way into the cache
	}
	existing := c.children.Lister().Namespace(c.ns).List(labels.SelectorFromSet(labels.Set{"parent": parent}))
	if len(existing) > 0 {
		return workqueue.Result{}, nil
	}
	if c.exp != nil {
		if err := c.exp.ExpectCreations(parent, 1); err != nil { // before the create: its event may beat us back
			return workqueue.Result{}, err
		}
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: parent + "-child-",
		Labels:       map[string]string{"parent": parent},
	}}
	if err := c.client.Post().Namespace(c.ns).Resource("configmaps").Body(child).Do(ctx).Error(); err != nil {
		if c.exp != nil {
			c.exp.CreationObserved(parent) // no event will come for a failed create
		}
		return workqueue.Result{}, err
	}
	c.creates.Add(1)
	return workqueue.Result{}, nil
}

// run reconciles parent while it is enqueued again every 20ms for 600ms,
// as a burst of updates or a resync would. The child informer watches
// through a proxy adding 400ms RTT, so for the first ~200ms after each
// create the cache does not have the child. It returns how many children
// exist on the server afterwards.
func (c *childMaker) run(t *testing.T, cp *testenv.ControlPlane, parent string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queue := workqueue.New(workqueue.Options[string]{})
	_, err := c.children.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(child *corev1.ConfigMap, _ bool) {
			if c.exp != nil {
				c.exp.CreationObserved(child.Labels["parent"])
			}
			queue.Add(child.Labels["parent"])
		},
	}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)

	runCtx, stop := context.WithCancel(ctx)
	informerDone := make(chan struct{})
	go func() { _ = c.children.Run(runCtx); close(informerDone) }()
	require.NoError(t, sharedinformer.WaitForCacheSync(ctx, c.children))
	workersDone := make(chan struct{})
	go func() {
		workqueue.Run(runCtx, queue, c.reconcile, workqueue.RunOptions[string]{Workers: 1})
		close(workersDone)
	}()

	for range 30 {
		queue.Add(parent)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // let the last events arrive and be reconciled
	stop()
	queue.ShutDown()
	<-workersDone
	<-informerDone

	list := &corev1.ConfigMapList{}
	require.NoError(t, c.client.Get().Namespace(c.ns).Resource("configmaps").
		VersionedParams(&metav1.ListOptions{LabelSelector: "parent=" + parent}, metav1.ParameterCodec).Do(ctx).Into(list))
	return len(list.Items)
}

// newChildMaker wires a childMaker to the shared control plane, its child
// informer behind a slow proxy.
func newChildMaker(t *testing.T, withExpectations bool) (*childMaker, *testenv.ControlPlane) {
	t.Helper()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	writer := cp.Config()
	writer.QPS = -1
	client, err := testenv.CoreV1Client(writer)
	require.NoError(t, err)

	proxy, slow := cp.Proxy(t)
	proxy.SetRTT(400 * time.Millisecond)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](slow, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns, LabelSelector: "parent",
	})
	require.NoError(t, err)
	children, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw})
	require.NoError(t, err)

	c := &childMaker{ns: ns, client: client, children: children}
	if withExpectations {
		exp, err := expectations.New[string](expectations.Options{})
		require.NoError(t, err)
		c.exp = exp
	}
	return c, cp
}

func TestWithoutExpectationsAStaleCacheCausesDuplicateCreates(t *testing.T) {
	c, cp := newChildMaker(t, false)
	children := c.run(t, cp, "web")
	t.Logf("without expectations: %d creates, %d children for one parent", c.creates.Load(), children)
	assert.Greater(t, children, 1, "the naive controller trusted a cache that lagged its own write")
}

func TestWithExpectationsAStaleCacheCausesExactlyOneCreate(t *testing.T) {
	c, cp := newChildMaker(t, true)
	children := c.run(t, cp, "web")
	t.Logf("with expectations: %d creates, %d children for one parent", c.creates.Load(), children)
	assert.Equal(t, 1, children)
	assert.EqualValues(t, 1, c.creates.Load())
}
