package sharedinformer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// keys is an Enqueuer that records what it is given, in order.
type keys []informer.Key

func (k *keys) Add(key informer.Key) { *k = append(*k, key) }

func secret(name string, owners ...metav1.OwnerReference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, OwnerReferences: owners}}
}

func ownedBy(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, Controller: &controller}
}

func TestEnqueueKeyAddsTheObjectsOwnKeyOnEveryNotification(t *testing.T) {
	var got keys
	h := sharedinformer.EnqueueKey[*corev1.ConfigMap](&got)
	a := configMap("a")
	h.OnAdd(a, true)
	h.OnUpdate(a, a)
	h.OnDelete(a, true)
	want := informer.Key{Namespace: "default", Name: "a"}
	assert.Equal(t, keys{want, want, want, want}, got, "add, update (old and new), delete")
}

func TestEnqueueOwnerAddsTheKeyOfAControllerOfThatKindOnly(t *testing.T) {
	configMaps := schema.GroupKind{Kind: "ConfigMap"}
	var got keys
	h := sharedinformer.EnqueueOwner[*corev1.Secret](&got, configMaps)

	h.OnAdd(secret("s1", ownedBy("v1", "ConfigMap", "web", true)), false)
	h.OnAdd(secret("s2", ownedBy("v1", "ConfigMap", "web", false)), false)            // an owner, not the controller
	h.OnAdd(secret("s3", ownedBy("apps/v1", "Deployment", "web", true)), false)       // another kind
	h.OnAdd(secret("s4", ownedBy("example.com/v1", "ConfigMap", "web", true)), false) // another group
	h.OnAdd(secret("s5"), false)                                                      // no owner
	assert.Equal(t, keys{{Namespace: "shop", Name: "web"}}, got)

	got = nil
	h.OnUpdate(secret("s1", ownedBy("v1", "ConfigMap", "old", true)), secret("s1", ownedBy("v1", "ConfigMap", "new", true)))
	h.OnDelete(secret("s1", ownedBy("v1", "ConfigMap", "new", true)), true)
	assert.Equal(t, keys{{Namespace: "shop", Name: "old"}, {Namespace: "shop", Name: "new"}, {Namespace: "shop", Name: "new"}}, got,
		"a child that changed hands wakes both owners; a delete wakes its owner")
}

// A namespaced child may be owned by a cluster-scoped object (the
// garbage collector allows it): its key has no namespace. (Found by a
// bug hunt: EnqueueOwner, the only handler for owners, gave it the
// child's namespace, a key no cluster-scoped lister finds.)
func TestEnqueueClusterScopedOwnerAddsTheOwnersKeyWithNoNamespace(t *testing.T) {
	var got keys
	h := sharedinformer.EnqueueClusterScopedOwner[*corev1.Secret](&got, schema.GroupKind{Group: "example.com", Kind: "Tenant"})
	h.OnAdd(secret("s1", ownedBy("example.com/v1", "Tenant", "acme", true)), false)
	h.OnAdd(secret("s2", ownedBy("v1", "ConfigMap", "web", true)), false) // another kind
	assert.Equal(t, keys{{Name: "acme"}}, got)
}

func TestEnqueueMappedAddsEveryKeyTheMapReturns(t *testing.T) {
	var got keys
	h := sharedinformer.EnqueueMapped(&got, func(cm *corev1.ConfigMap) []informer.Key {
		return []informer.Key{{Namespace: "x", Name: cm.Name + "-1"}, {Namespace: "x", Name: cm.Name + "-2"}}
	})
	h.OnAdd(configMap("a"), false)
	assert.Equal(t, keys{{Namespace: "x", Name: "a-1"}, {Namespace: "x", Name: "a-2"}}, got)
}

func TestHandlerHelpersGivenNothingToCallGiveAHandlerAddEventHandlerRejects(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	var nilQueue *keys
	for name, h := range map[string]sharedinformer.Handler[*corev1.ConfigMap]{
		"EnqueueKey(nil)":          sharedinformer.EnqueueKey[*corev1.ConfigMap](nil),
		"EnqueueKey(typed nil)":    sharedinformer.EnqueueKey[*corev1.ConfigMap](nilQueue),
		"EnqueueMapped(q, nil)":    sharedinformer.EnqueueMapped[*corev1.ConfigMap](&keys{}, nil),
		"EnqueueOwner(q, no kind)": sharedinformer.EnqueueOwner[*corev1.ConfigMap](&keys{}, schema.GroupKind{}),
		"Filtered(nil)":            sharedinformer.Filtered[*corev1.ConfigMap](nil),
		"a typed nil handler":      (*calls)(nil),
	} {
		_, err := inf.AddEventHandler(h)
		assert.ErrorContains(t, err, "the handler is nil", name)
	}
}

func TestWaitForCacheSyncOfANilSyncerIsAnErrorNotAPanic(t *testing.T) {
	var reg *sharedinformer.Registration // from an AddEventHandler whose error was ignored
	err := sharedinformer.WaitForCacheSync(t.Context(), reg)
	assert.ErrorContains(t, err, "syncer 0 is nil")
}
