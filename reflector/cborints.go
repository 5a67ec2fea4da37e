package reflector

import "math"

// jsonNumbers changes, in place, every float64 in v that is a whole
// number an int64 holds into that int64, as reading the same object in
// JSON gives it: kube-apiserver writes float64(2) as 2 in JSON, which
// reads back as int64(2), but as a float in CBOR. Without it, a relist
// that changes encoding would see every such object changed
// (TestTheSameObjectListedInJSONThenInCBORIsEqual).
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}
