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
		{pairsRun{shape: scale.Widgets, relists: 3, names: []string{"ours", "floor"}}, `-relists of widgets measures [ours ours-unstructured ours-unstructured-cbor ours-unstructured-json ours-metadata client-go client-go-dynamic client-go-dynamic-cbor client-go-metadata], not "floor"`},
		{pairsRun{shape: scale.ConfigMaps, relists: 3, names: []string{"ours", "client-go-dynamic"}}, `-relists of configmaps measures [ours ours-json ours-unstructured ours-metadata ours-streamed client-go], not "client-go-dynamic"`},
		{pairsRun{shape: scale.Widgets, repeated: true, names: []string{"ours"}}, "-payload repeated is for configmaps"},
		{pairsRun{shape: scale.ConfigMaps, cborGate: true, names: []string{"ours", "client-go"}}, "-cbor-gate is for -shape widgets: no variant of configmaps offers CBOR"},
		{pairsRun{shape: scale.Widgets, names: []string{"ours-unstructured-cbor", "ours-unstructured-json"}}, "ours-unstructured-cbor must be answered in CBOR, which kube-apiserver serves only with its CBORServingAndStorage gate on: add -cbor-gate"},
		{pairsRun{shape: scale.Widgets, relists: 3, names: []string{"ours-unstructured-cbor"}}, "add -cbor-gate"},
	} {
		err := c.run.check()
		if assert.Error(t, err, "%+v", c.run) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// The default pair, ours and client-go, exists for every shape, and
// -shape widgets has a variant for each library and each of the ladder's
// Widgets variants, the raw floor, and the three named after CBOR or
// JSON (answeredIn).
func TestEveryShapeHasTheDefaultPair(t *testing.T) {
	for _, shape := range shapeNames() {
		assert.NoError(t, pairsRun{shape: shape, names: []string{"ours", "client-go"}}.check(), shape)
	}
	assert.Len(t, widgetVariants, 2*len(scale.VariantsOf(scale.Widgets))+4)
	assert.Contains(t, widgetVariants, "floor")
}

// The encodings are compared on one server: with -cbor-gate, the CBOR
// and the JSON variant, and the rest beside them, run and relist.
func TestWithTheCBORGateTheCBORAndJSONVariantsRunSideBySide(t *testing.T) {
	both := []string{"ours-unstructured-cbor", "ours-unstructured-json", "client-go-dynamic-cbor", "client-go-dynamic"}
	assert.NoError(t, pairsRun{shape: scale.Widgets, cborGate: true, names: both}.check())
	assert.NoError(t, pairsRun{shape: scale.Widgets, cborGate: true, relists: 3, names: both}.check())
	assert.NoError(t, pairsRun{shape: scale.Widgets, cborGate: true, names: []string{"ours", "client-go"}}.check())
	err := pairsRun{shape: scale.Widgets, names: []string{"client-go-dynamic-cbor", "client-go-dynamic"}}.check()
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "client-go-dynamic-cbor must be answered in CBOR")
	}
	// JSON alone needs no gate: the server answers JSON either way.
	assert.NoError(t, pairsRun{shape: scale.Widgets, names: []string{"ours-unstructured-json", "client-go-dynamic"}}.check())
}

// -relists takes, for Widgets, every kind scale relists, and each is the
// sync variant of the same name: one -variants list means the same
// informers in both modes.
func TestEveryWidgetRelistKindIsTheSyncVariantOfItsName(t *testing.T) {
	kinds := scale.RelistKindsOf(scale.Widgets)
	assert.NoError(t, pairsRun{shape: scale.Widgets, relists: 3, cborGate: true, names: kinds}.check())
	for _, kind := range kinds {
		assert.Contains(t, widgetVariants, kind)
	}
	for name := range answeredIn {
		assert.Contains(t, widgetVariants, name)
		assert.Contains(t, kinds, name)
	}
	for name := range childEnv {
		assert.Contains(t, widgetVariants, name)
	}
}

// A variant named after an encoding that got its list in another is an
// error that names the request, the answer and, for CBOR, the gate; one
// that got it in its encoding, or that names none, is not.
func TestAVariantAnsweredInAnotherEncodingThanItsNameIsAnError(t *testing.T) {
	const request = "GET /apis/bench.listwatch.dev/v1/widgets (Accept: application/cbor;q=1,application/json;q=0.9)"
	assert.NoError(t, checkAnswer("ours-unstructured-cbor", request, "application/cbor, gzip"))
	assert.NoError(t, checkAnswer("ours-unstructured-cbor", request, "application/cbor-seq, gzip"), "a streaming list")
	assert.NoError(t, checkAnswer("ours-unstructured-json", request, "application/json;stream=watch, gzip"), "a streaming list")
	assert.NoError(t, checkAnswer("ours-unstructured-json", "GET /apis/bench.listwatch.dev/v1/widgets (Accept: application/json)", "application/json, identity"))
	assert.NoError(t, checkAnswer("ours-unstructured", request, "application/json, gzip"), "ours-unstructured takes what comes")

	err := checkAnswer("ours-unstructured-cbor", request, "application/json, gzip")
	if assert.Error(t, err) {
		assert.Equal(t, `syncpair: ours-unstructured-cbor must be answered in CBOR; `+request+` was answered "application/json, gzip": kube-apiserver answers CBOR only with --feature-gates=CBORServingAndStorage=true, which -cbor-gate starts it with`, err.Error())
	}
	err = checkAnswer("ours-unstructured-json", request, "application/cbor, gzip")
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), `ours-unstructured-json must be answered in JSON`)
		assert.NotContains(t, err.Error(), "-cbor-gate")
	}
	err = checkAnswer("ours-unstructured-cbor", "", "")
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "no request for its list was seen")
	}
}
