package reflector

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	sigsjson "sigs.k8s.io/json"
)

// jsonNumber gives, for any float64, what the server's JSON encoder
// (encoding/json) and the client's JSON decoder (sigs.k8s.io/json, as
// unstructured JSON decoding uses it) give together: whole numbers near
// and past int64's ends, past 2^53, with exponents, and random bits.
func TestAFloatReadsInCBORAsTheServersJSONSpellingOfItReads(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 2, 0.5, 1e-7, 1 << 53, 1<<53 + 2, 1 << 62, -(1 << 62),
		1 << 63, -(1 << 63), math.Nextafter(1<<63, 0), math.Nextafter(-(1 << 63), 0), 1e20, 1e21, math.Nextafter(1e21, 0),
		-1e21, 1e300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxUint64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		floats = append(floats, math.Float64frombits(rng.Uint64()), math.Trunc(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(22)))))
	}
	for _, x := range floats {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue // JSON has no spelling for them, and CBOR's decoder refuses them
		}
		spelt, err := json.Marshal(x)
		require.NoError(t, err)
		var want any
		require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts(spelt, &want))
		require.Equal(t, want, jsonNumber(x), "%v, spelt %s", x, spelt)
	}
}
