package reflector_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

func TestASelectorThatDoesNotParseIsAnErrorNamingIt(t *testing.T) {
	for _, src := range []reflector.Source{
		{Resource: configMapsGVR, LabelSelector: "app in ("},
		{Resource: configMapsGVR, FieldSelector: "metadata.name"},
	} {
		_, err := reflector.NewUnstructuredListerWatcher(&rest.Config{Host: "https://127.0.0.1:1"}, src)
		require.Error(t, err, "%+v", src)
		assert.Contains(t, err.Error(), "selector", "%+v", src)
		assert.Contains(t, err.Error(), src.LabelSelector+src.FieldSelector)
	}
}

func TestASourceWithoutResourceOrWithABadNamespaceIsAnError(t *testing.T) {
	for _, src := range []reflector.Source{
		{},
		{Resource: configMapsGVR, Namespace: "Not_A_Name"},
	} {
		require.Error(t, src.Validate(), "%+v", src)
	}
	require.NoError(t, reflector.Source{Resource: configMapsGVR, Namespace: "shop", LabelSelector: "app in (a,b)"}.Validate())
}

func TestEquivalentSelectorsHaveOneCanonicalSpelling(t *testing.T) {
	a, err := reflector.Source{Resource: configMapsGVR, LabelSelector: "a=1,b=2", FieldSelector: "metadata.name=x,metadata.namespace!=y"}.Canonical()
	require.NoError(t, err)
	b, err := reflector.Source{Resource: configMapsGVR, LabelSelector: "b=2, a=1", FieldSelector: "metadata.namespace!=y, metadata.name=x"}.Canonical()
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestTheDefaultNameOfAReflectorSaysWhatItLists(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: "https://127.0.0.1:1"}, scheme,
		reflector.Source{Resource: configMapsGVR, Namespace: "shop", LabelSelector: "app=web"})
	require.NoError(t, err)
	r, err := reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: discard{}})
	require.NoError(t, err)
	assert.Equal(t, "configmaps in namespace shop, labels app=web", r.Name())
}

func TestListerWatchersOfOneScopeReadDifferentlyHaveDifferentNames(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	src := reflector.Source{Resource: configMapsGVR, Namespace: "shop"}
	typed, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, src)
	require.NoError(t, err)
	src.Protobuf = true
	protobuf, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, src)
	require.NoError(t, err)
	src.Protobuf = false
	unstructured, err := reflector.NewUnstructuredListerWatcher(cfg, src)
	require.NoError(t, err)
	metadata, err := reflector.NewMetadataListerWatcher(cfg, src)
	require.NoError(t, err)
	src.CBOR = true
	cbor, err := reflector.NewUnstructuredListerWatcher(cfg, src)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"configmaps in namespace shop",
		"configmaps in namespace shop, protobuf",
		"configmaps in namespace shop (unstructured)",
		"configmaps in namespace shop (metadata only)",
		"configmaps in namespace shop, offers CBOR (unstructured)",
	}, []string{typed.String(), protobuf.String(), unstructured.String(), metadata.String(), cbor.String()})
}

func TestBuiltInTypesAndMetadataOnlyAreProtobufCapableCustomAndUnstructuredAreNot(t *testing.T) {
	assert.True(t, reflector.ProtobufCapable[*corev1.ConfigMap]())
	assert.True(t, reflector.ProtobufCapable[*corev1.Pod]())
	assert.True(t, reflector.ProtobufCapable[*metav1.PartialObjectMetadata]())
	assert.False(t, reflector.ProtobufCapable[*unstructured.Unstructured]())
	assert.False(t, reflector.ProtobufCapable[*octopus]())
}

// octopus stands for a custom resource's Go type, as controller-gen
// writes it: no protobuf methods.
type octopus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (o *octopus) DeepCopyObject() runtime.Object { c := *o; return &c }
