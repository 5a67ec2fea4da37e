package sharedinformer

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAKeptEntryIsHandedOutOnlyIfItIsWhatTheObjectHeld proves that the
// check a kept unstructured managedFields entry passes before it is
// handed out again (internunstructured.go: "compared whole ... a kept
// entry a reader changed in place, is not the same entry") is equality,
// not identity: jsonvalue.Equal says what reflect.DeepEqual says, and
// 0 == -0. A reader changes a kept entry's field set in place to hold
// the number 0 (pitfall 2); an object then arrives whose entry holds -0
// there. The object's own entry is replaced by the kept one, so it is
// cached with 0, a value the server never sent: an entry of a shape the
// table would never keep (numbers) is matched against a kept one that a
// reader made so. Low severity: it needs a mutating reader and a number
// in a field set.
//
// Passing means an object's entry is replaced only by one that holds
// exactly what it held (or that an incoming entry of a shape never kept
// is never replaced).
func TestAKeptEntryIsHandedOutOnlyIfItIsWhatTheObjectHeld(t *testing.T) {
	entry := func(leaf any) map[string]any {
		return map[string]any{"manager": "m", "operation": "Update", "apiVersion": "v1", "time": "2026-12-06T01:02:03Z",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:x": leaf}}}
	}
	object := func(e map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default", "managedFields": []any{e}}}}
	}
	var in interner
	first := object(entry(map[string]any{}))
	in.share(first)
	kept := first.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)

	// The mistake: a reader changes the kept entry in place.
	kept["fieldsV1"].(map[string]any)["f:spec"].(map[string]any)["f:x"] = float64(0)

	second := object(entry(math.Copysign(0, -1)))
	in.share(second)
	got := second.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
	x := got["fieldsV1"].(map[string]any)["f:spec"].(map[string]any)["f:x"].(float64)
	if !math.Signbit(x) {
		t.Fatalf("the object's entry held -0 at f:spec.f:x; after sharing it holds %v, the kept entry a reader changed", x)
	}
}
