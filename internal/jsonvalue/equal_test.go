package jsonvalue

import (
	"math"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// Equal says what reflect.DeepEqual says of any two values an
// unstructured object may hold, nested maps and slices, nil and empty
// ones, numbers of either type and NaN among them: the cases that tell
// them apart, then values drawn from small sets, so that equal ones come
// up often.
func TestEqualIsReflectDeepEqualOnUnstructuredValues(t *testing.T) {
	for _, c := range [][2]any{
		{map[string]any(nil), map[string]any{}},
		{[]any(nil), []any{}},
		{nil, map[string]any(nil)},
		{int64(1), float64(1)},
		{math.NaN(), math.NaN()},
		{1, 1},
		{map[string]any{"x": nil}, map[string]any{"y": nil}},
	} {
		if got, want := Equal(c[0], c[1]), reflect.DeepEqual(c[0], c[1]); got != want {
			t.Errorf("Equal(%#v, %#v) = %v, reflect.DeepEqual says %v", c[0], c[1], got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		a, b := unstructuredValue(t, 3, "a"), unstructuredValue(t, 3, "b")
		if rapid.Bool().Draw(t, "b is a's copy") {
			b = copyValue(a)
		}
		if got, want := Equal(a, b), reflect.DeepEqual(a, b); got != want {
			t.Fatalf("Equal(%#v, %#v) = %v, reflect.DeepEqual says %v", a, b, got, want)
		}
	})
}

func unstructuredValue(t *rapid.T, depth int, label string) any {
	kinds := []string{"nil", "string", "int64", "float64", "bool", "other"}
	if depth > 0 {
		kinds = append(kinds, "map", "map", "slice", "nil map", "nil slice")
	}
	switch rapid.SampledFrom(kinds).Draw(t, label) {
	case "string":
		return rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, label)
	case "int64":
		return rapid.Int64Range(0, 2).Draw(t, label)
	case "float64":
		return rapid.SampledFrom([]float64{0, 1, math.NaN()}).Draw(t, label)
	case "bool":
		return rapid.Bool().Draw(t, label)
	case "other":
		return rapid.IntRange(0, 1).Draw(t, label) // an int, which no decoded object holds
	case "map":
		m := map[string]any{}
		for _, k := range rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"x", "y", "z"}), 0, 3, rapid.ID[string]).Draw(t, label) {
			m[k] = unstructuredValue(t, depth-1, label+"."+k)
		}
		return m
	case "slice":
		s := []any{}
		for i := range rapid.IntRange(0, 2).Draw(t, label) {
			s = append(s, unstructuredValue(t, depth-1, label+"["+string(rune('0'+i))+"]"))
		}
		return s
	case "nil map":
		return map[string]any(nil)
	case "nil slice":
		return []any(nil)
	}
	return nil
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		if x == nil {
			return x
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = copyValue(e)
		}
		return s
	}
	return v
}
