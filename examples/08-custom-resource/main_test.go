package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// Against the real control plane: the CRD installed, three Widgets
// created through the Go type, each one's status set through the status
// subresource by a controller reading them from an informer of *Widget.
func TestAControllerOnTheWidgetGoTypeSetsEachWidgetsStatus(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns, "--widgets", "3"}, &out)
	t.Log(out.String())
	require.NoError(t, err)
	assert.Equal(t, "widget-0: size 0, tags map[team:a], ready false, observed generation 1\n"+
		"widget-1: size 1, tags map[team:a], ready true, observed generation 1\n"+
		"widget-2: size 2, tags map[team:a], ready true, observed generation 1\n", out.String())
}

// A deep copy shares nothing: changing the copy's tags, ports or labels
// leaves the original as it was. A copy that shared the map would change
// the informer's cache behind its back.
func TestAWidgetsDeepCopySharesNoMapOrSlice(t *testing.T) {
	w := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"a": "1"}},
		Spec: WidgetSpec{Size: 1, Tags: map[string]string{"team": "a"}, Ports: []int32{80}}}
	c := w.DeepCopy()
	c.Spec.Tags["team"] = "b"
	c.Spec.Ports[0] = 81
	c.Labels["a"] = "2"
	assert.Equal(t, "a", w.Spec.Tags["team"])
	assert.Equal(t, int32(80), w.Spec.Ports[0])
	assert.Equal(t, "1", w.Labels["a"])

	list := &WidgetList{Items: []Widget{*w}}
	lc := list.DeepCopyObject().(*WidgetList)
	lc.Items[0].Spec.Tags["team"] = "c"
	assert.Equal(t, "a", list.Items[0].Spec.Tags["team"])
	assert.Nil(t, (*Widget)(nil).DeepCopy())
}

// AddToScheme registers the list type too: a LIST is answered with a
// WidgetList, and without it the informer cannot decode one.
func TestAddToSchemeRegistersWidgetAndWidgetList(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, AddToScheme(scheme))
	assert.True(t, scheme.Recognizes(GroupVersion.WithKind("Widget")))
	assert.True(t, scheme.Recognizes(GroupVersion.WithKind("WidgetList")))
	assert.True(t, scheme.Recognizes(GroupVersion.WithKind("ListOptions")), "metav1.AddToGroupVersion adds the options types")
}
