package readyourwrites_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// A Namespace being deleted has a deletionTimestamp, no
// metadata.finalizers (its finalizer "kubernetes" is in spec.finalizers)
// and no grace period, and it goes on existing until the namespace
// controller has emptied it. An update of it (a label, an annotation, a
// status condition) is an update, seen once the cache holds its answer,
// not a delete that holds the owner for MaxHold. (Found by review: it was
// recorded as a delete.)
func TestAnUpdateOfATerminatingNamespaceIsSeenOnceTheCacheHoldsIt(t *testing.T) {
	cp := testenv.Shared(t)
	core := must(testenv.CoreV1Client(cp.Config()))
	name := fmt.Sprintf("review41-%d", time.Now().UnixNano())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(t.Context()).Error())
	t.Cleanup(func() { // no namespace controller here: finalize it by hand
		var got corev1.Namespace
		if core.Get().Resource("namespaces").Name(name).Do(t.Context()).Into(&got) == nil {
			got.Spec.Finalizers = nil
			_ = core.Put().Resource("namespaces").Name(name).SubResource("finalize").Body(&got).Do(t.Context()).Error()
		}
	})
	require.NoError(t, core.Delete().Resource("namespaces").Name(name).Do(t.Context()).Error())

	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory, err := si.NewFactory(cp.Config(), si.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	inf, err := si.InformerFor[*corev1.Namespace](t.Context(), factory, si.WithFields("metadata.name="+name))
	require.NoError(t, err)
	factory.Start(t.Context())
	t.Cleanup(factory.Wait)
	require.NoError(t, factory.WaitForCacheSync(t.Context()))

	guard, err := readyourwrites.New(readyourwrites.Options{Name: "review41", MaxHold: 30 * time.Second})
	require.NoError(t, err)
	t.Cleanup(guard.Close)
	namespaces := readyourwrites.Track(guard, inf)

	var cur corev1.Namespace
	require.NoError(t, core.Get().Resource("namespaces").Name(name).Do(t.Context()).Into(&cur))
	require.NotNil(t, cur.DeletionTimestamp, "Terminating")
	cur.Labels = map[string]string{"review41": "labelled"}
	owner := informer.Key{Name: name}
	out := &corev1.Namespace{}
	require.NoError(t, namespaces.Write(t.Context(), owner, core.Put().Resource("namespaces").Name(name).Body(&cur), out))
	t.Logf("answer: deletionTimestamp %v, finalizers %v, grace %v, spec.finalizers %v, phase %s",
		out.DeletionTimestamp, out.Finalizers, out.DeletionGracePeriodSeconds, out.Spec.Finalizers, out.Status.Phase)

	require.Eventually(t, func() bool {
		got, ok := inf.Indexer().Get(informer.Key{Name: name})
		return ok && got.Labels["review41"] == "labelled" && got.ResourceVersion == out.ResourceVersion
	}, 30*time.Second, 10*time.Millisecond, "the cache shows the update")

	hold, _, within := guard.Hold(owner)
	assert.False(t, hold, "the cache shows the write, at its resourceVersion, yet the key is held for %v more: the update was recorded as a delete of a Namespace that still exists", within)
}
