package scale

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Widget carries what the ConfigMap of the same index carries, so the
// two shapes differ only in how they are served and decoded.
func TestTheIthWidgetCarriesTheIthConfigMapsData(t *testing.T) {
	w, cm := NewWidget(42), ConfigMap(42)
	assert.Equal(t, cm.Namespace, w.Namespace)
	assert.Equal(t, cm.Labels, w.Labels)
	assert.Equal(t, cm.Data["payload"], w.Spec.Payload)
	assert.Len(t, w.Spec.Payload, 900)
}

// A deep copy shares no map with the original: a reconcile that changes
// its copy's labels must not change the cache's object (pitfall 2).
func TestAWidgetsDeepCopySharesNoMap(t *testing.T) {
	list := &WidgetList{Items: []Widget{*NewWidget(1)}}
	copied := list.DeepCopyObject().(*WidgetList)
	copied.Items[0].Labels["tier"] = "changed"
	single := NewWidget(2)
	other := single.DeepCopyObject().(*Widget)
	other.Labels["app"] = "changed"
	assert.Equal(t, "backend", list.Items[0].Labels["tier"])
	assert.Equal(t, "app-2", single.Labels["app"])
	assert.Nil(t, (*Widget)(nil).DeepCopy())
}

// The scheme the ladder's typed informers and clients use knows Widget
// and its list type, in the CRD's group and version.
func TestTheSchemeKnowsWidgetAndItsList(t *testing.T) {
	kinds, _, err := scheme.ObjectKinds(&Widget{})
	require.NoError(t, err)
	assert.Equal(t, WidgetGroupVersion.WithKind("Widget"), kinds[0])
	assert.True(t, scheme.Recognizes(WidgetGroupVersion.WithKind("WidgetList")))
}
