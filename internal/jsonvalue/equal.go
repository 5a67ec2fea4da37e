// Package jsonvalue compares the values an unstructured object holds:
// what a JSON or CBOR decoder makes of an object, nested maps and slices
// of strings, numbers, bools and nil. The fake API server compares whole
// objects with it (an update that changes nothing writes nothing); the
// informer's interner, managedFields entries it may share.
package jsonvalue

import "reflect"

// Equal reports whether a and b, values of an unstructured object, are
// equal, as reflect.DeepEqual says (a nil map or slice is not an empty
// one; an int64 is not a float64; NaN is not NaN), without reflection for
// the types an unstructured object holds: maps, slices, strings, numbers,
// bools and nil. Any other type goes to reflect.DeepEqual. By reflection,
// comparing was the larger part of the fake API server's cost of an
// update (TestEqualIsReflectDeepEqualOnUnstructuredValues). Cost: O(a).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}
