package random

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// seeded is the source Seed installs; its fields are guarded by mu.
type seeded struct {
	mu     sync.Mutex
	seed   uint64
	rng    *rand.Rand     // Fraction's stream
	tokens map[string]int // Tokens drawn so far, by key
}

// current is the installed seeded source, nil for the unseeded ones.
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

// Seed makes Fraction and Token draw from sources seeded with seed until
// restore is called, which puts back the unseeded ones.
func Seed(seed uint64) (restore func()) {
	current.Store(&seeded{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x717e5)), tokens: map[string]int{}})
	return func() { current.Store(nil) }
}

// stream returns the seeded stream of key's next Token. s.mu must be
// held.
func (s *seeded) stream(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	n := s.tokens[key]
	s.tokens[key] = n + 1
	return rand.New(rand.NewPCG(s.seed^h.Sum64(), uint64(n)))
}
