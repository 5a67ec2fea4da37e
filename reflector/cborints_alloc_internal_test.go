package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// jsonNumbers changes nothing in an object with no float in it, and so
// writes nothing: writing a map entry, even one it has, makes the
// runtime grow a full small map (eight entries, as a custom resource's
// metadata often has) to a table, which the cache would then keep for
// every object read in CBOR (about 300 bytes more an object than the
// same list read in JSON).
func TestJSONNumbersWritesNothingIntoAnObjectWithNoFloat(t *testing.T) {
	fresh := func() map[string]any {
		return map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{
				"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "1", "generation": int64(1),
				"creationTimestamp": "2026-12-05T12:00:00Z", "labels": map[string]any{"app": "a", "tier": "b"},
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{}}},
			},
			"spec": map[string]any{"payload": "x"},
		}
	}
	objs := make([]map[string]any, 101)
	for i := range objs {
		objs[i] = fresh()
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		jsonNumbers(objs[i])
		i++
	})
	assert.Zero(t, allocs, "allocations a call")
	assert.Equal(t, fresh(), objs[0], "the object is unchanged")
}
