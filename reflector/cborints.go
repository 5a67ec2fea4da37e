package reflector

import (
	"math"
	"strconv"
)

// jsonNumbers changes, in place, every float64 in v into what reading
// the same object in JSON gives. kube-apiserver writes a float64 in JSON
// in its shortest spelling (encoding/json), padded with zeros when it is
// whole and below 1e21 in size: float64(2) as "2", 2^62 as
// "4611686018427388000", -2^63 as "-9223372036854776000". The JSON
// decoder (sigs.k8s.io/json) reads a number without a "." as an int64
// when the int64 holds it, and as a float64 otherwise. So a whole float64
// reads back from JSON as the int64 of its spelling, which may differ
// from int64(x) past 2^53, or as itself when that spelling overflows; in
// CBOR the server writes it as a float. Without this, a relist that
// changes encoding would see every such object changed
// (TestTheSameObjectListedInJSONThenInCBORIsEqual,
// TestAWholeNumberFloatOfAnySizeReadsInCBORAsInJSON).
//
// It writes into a map only the floats it changes: the runtime grows a
// full small map (eight entries) to a table on any write, even of a key
// it holds, and the cache would keep that table for every object
// (TestJSONNumbersWritesNothingIntoAnObjectWithNoFloat).
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		return jsonNumber(x)
	case map[string]any:
		for k, e := range x {
			if f, ok := e.(float64); ok {
				if n, changed := jsonNumber(f).(int64); changed {
					x[k] = n
				}
				continue
			}
			jsonNumbers(e) // a map or a slice changes in place
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}

// jsonNumber is x written by encoding/json and read by sigs.k8s.io/json
// into an any.
func jsonNumber(x float64) any {
	if x != math.Trunc(x) || math.Abs(x) >= 1e21 { // a fraction, NaN, ±Inf, or spelt with an exponent
		return x
	}
	// As encoding/json spells it below 1e21; a whole number has no ".".
	if n, err := strconv.ParseInt(strconv.FormatFloat(x, 'f', -1, 64), 10, 64); err == nil {
		return n
	}
	return x
}
