package random_test

import (
	"fmt"
	"time"

	"github.com/listwatch/informer/internal/random"
)

// A retry period of 2 s spread by up to 20%: with a seed, the same wait
// on every run.
func Example() {
	restore := random.Seed(1)
	defer restore()
	wait := 2*time.Second + time.Duration(random.Fraction()*0.2*float64(2*time.Second))
	fmt.Println(wait >= 2*time.Second && wait < 2400*time.Millisecond)
	// Output: true
}
