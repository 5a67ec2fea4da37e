package scale_test

import (
	"fmt"

	"github.com/listwatch/informer/bench/scale"
)

// Three interleaved pairs of sync times, ours and client-go's: the ratio
// is their geometric mean with a 95% interval, and a goal is met only
// when the whole interval is on its side.
func ExamplePairedRatio() {
	ours := []float64{1.20, 1.25, 1.18}
	clientGo := []float64{1.72, 1.77, 1.71}
	r, err := scale.PairedRatio(ours, clientGo)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	fmt.Println("≤ 0.8×:", r.AtMost(0.8))
	fmt.Println("≤ 0.6×:", r.AtMost(0.6))
	// Output:
	// 0.70× [0.68, 0.72]
	// ≤ 0.8×: met
	// ≤ 0.6×: missed
}
