package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/informer/bench/scale"
)

// Flags that do not go together are refused with an error that names
// what would do, before any control plane starts.
func TestFlagsThatDoNotGoTogetherAreRefusedBeforeAnythingStarts(t *testing.T) {
	for _, c := range []struct {
		run  pairsRun
		want string
	}{
		{pairsRun{shape: "pods", names: []string{"ours"}}, `-shape "pods": want one of [configmaps widgets]`},
		{pairsRun{shape: scale.Widgets, names: []string{"ours-stripped", "client-go"}}, `widgets have no variant "ours-stripped"`},
		{pairsRun{shape: scale.ConfigMaps, names: []string{"ours", "client-go-dynamic"}}, `configmaps have no variant "client-go-dynamic"`},
		{pairsRun{shape: scale.Widgets, relists: 3, names: []string{"ours", "floor"}}, `-relists of widgets measures [ours ours-unstructured ours-metadata client-go client-go-dynamic client-go-metadata], not "floor"`},
		{pairsRun{shape: scale.ConfigMaps, relists: 3, names: []string{"ours", "client-go-dynamic"}}, `-relists of configmaps measures [ours ours-json ours-unstructured ours-metadata ours-streamed client-go], not "client-go-dynamic"`},
		{pairsRun{shape: scale.Widgets, repeated: true, names: []string{"ours"}}, "-payload repeated is for configmaps"},
	} {
		err := c.run.check()
		if assert.Error(t, err, "%+v", c.run) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// The default pair, ours and client-go, exists for every shape, and
// -shape widgets has a variant for each library and each of the ladder's
// Widgets variants, and the raw floor.
func TestEveryShapeHasTheDefaultPair(t *testing.T) {
	for _, shape := range shapeNames() {
		assert.NoError(t, pairsRun{shape: shape, names: []string{"ours", "client-go"}}.check(), shape)
	}
	assert.Len(t, widgetVariants, 2*len(scale.VariantsOf(scale.Widgets))+1)
	assert.Contains(t, widgetVariants, "floor")
}

// -relists takes, for Widgets, every kind scale relists, and each is the
// sync variant of the same name: one -variants list means the same
// informers in both modes.
func TestEveryWidgetRelistKindIsTheSyncVariantOfItsName(t *testing.T) {
	kinds := scale.RelistKindsOf(scale.Widgets)
	assert.NoError(t, pairsRun{shape: scale.Widgets, relists: 3, names: kinds}.check())
	for _, kind := range kinds {
		assert.Contains(t, widgetVariants, kind)
	}
}
