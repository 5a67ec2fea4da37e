package simulation

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Replicas started at one instant, at the run's start or restarted
// together, would race for their Leases in the runtime's order, which no
// seed fixes and no replay repeats; so would a replica's sharders and
// members. So a replica comes up 1 to 50 ms after it is started, and its
// parts start 1 to 10 ms apart, each time drawn from the seed and the
// replica's name: who asks first is the seed's choice. A pause holds a
// start back, and a resume frees many at once, so a start that falls in
// a pause waits for the resume and then its own delay again.
type bootTimes struct {
	rng   *rand.Rand
	after time.Duration
}

func newBootTimes(seed int64, replica string) *bootTimes {
	h := fnv.New64a()
	h.Write([]byte(replica))
	return &bootTimes{rng: rand.New(rand.NewPCG(uint64(seed), h.Sum64()))}
}

// up returns how long the replica takes to come up: 1 to 50 ms.
func (b *bootTimes) up() time.Duration {
	return time.Millisecond + time.Duration(b.rng.IntN(49_000))*time.Microsecond
}

// next returns how long after the replica came up its next part starts:
// each 1 to 10 ms after the one before.
func (b *bootTimes) next() time.Duration {
	b.after += time.Millisecond + time.Duration(b.rng.IntN(9_000))*time.Microsecond
	return b.after
}

// startAfter waits d on the bubble's clock, and, while the slot is paused
// then, for the resume and d again; it reports whether ctx is still
// going. Waited on the replica's own clock instead, every start that
// fell in a pause would fire at the resume, at one instant.
func startAfter(ctx context.Context, g *gate, d time.Duration) bool {
	for {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return false
		}
		if !g.isPaused() {
			return true
		}
		if !g.wait(ctx) {
			return false
		}
	}
}
