package jitter

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// seeded is a seeded source, locked: *rand.Rand is not safe for
// concurrent use.
type seeded struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// current is the installed seeded source, nil for the global one.
var current atomic.Pointer[seeded]

// Fraction returns a pseudo-random number in [0, 1).
func Fraction() float64 {
	s := current.Load()
	if s == nil {
		return rand.Float64()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

// Seed makes Fraction draw from a source seeded with seed until restore
// is called, which puts back math/rand/v2's global source.
func Seed(seed uint64) (restore func()) {
	current.Store(&seeded{rng: rand.New(rand.NewPCG(seed, 0x717e5))})
	return func() { current.Store(nil) }
}
