package random

import (
	"crypto/rand"
	"encoding/hex"
)

// Token returns n random bytes as 2n hex digits, for an identifier that
// must not repeat: crypto/rand's, unless Seed installed a seeded source;
// then the k-th Token of key is the same on every run. key names who
// draws (a ring and a member's name), so that draws of different keys
// made at once do not swap their tokens.
func Token(key string, n int) (string, error) {
	b := make([]byte, n)
	s := current.Load()
	if s == nil {
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := s.stream(key)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return hex.EncodeToString(b), nil
}
