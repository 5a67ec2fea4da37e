package random_test

import (
	"slices"
	"testing"

	"github.com/listwatch/informer/internal/random"
)

func draw(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = random.Fraction()
	}
	return out
}

func TestASeedGivesTheSameFractionsEveryTime(t *testing.T) {
	restore := random.Seed(42)
	first := draw(5)
	restore()
	restore = random.Seed(42)
	second := draw(5)
	restore()
	if !slices.Equal(first, second) {
		t.Fatalf("seed 42 drew %v, then %v", first, second)
	}
	for _, f := range first {
		if f < 0 || f >= 1 {
			t.Fatalf("fraction %v is outside [0, 1)", f)
		}
	}
}

func TestAfterRestoreFractionsAreNoLongerTheSeededStream(t *testing.T) {
	restore := random.Seed(7)
	seeded := draw(8)
	restore()
	restore = random.Seed(7)
	restore()
	if unseeded := draw(8); slices.Equal(seeded, unseeded) {
		t.Fatalf("after restore, Fraction still drew seed 7's stream %v", seeded)
	}
}
