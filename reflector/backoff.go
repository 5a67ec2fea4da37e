package reflector

import (
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/random"
)

// backoff spaces out retries after failures: each failure waits longer
// than the one before, by a factor, up to a cap; random jitter keeps many
// clients from retrying in lockstep; and a healthy stretch resets it, so a
// failure after hours of calm waits only the initial delay again.
//
// With the defaults (800ms, factor 2, cap 30s, jitter 1.0) a server that
// never answers sees requests at most every 0.8–1.6s at first and every
// 30–60s after about a minute: client-go's figures, chosen so that
// thousands of clients of a sick apiserver do not keep it down.
//
// It is used by Run's goroutine only and needs no lock.
type backoff struct {
	initial, max, reset time.Duration
	factor, jitter      float64
	// base is the wait before jitter for the next failure; 0 means
	// "initial". Invariant: initial <= base <= max once set.
	base time.Duration
	// retried is when the wait for the latest failure ended, that is when
	// the reflector went back to work. A failure more than reset after it
	// starts the sequence over.
	retried time.Time
}

func newBackoff[T informer.Object](o Options[T]) backoff {
	return backoff{initial: o.BackoffInitial, max: o.BackoffMax, reset: o.BackoffReset, factor: o.BackoffFactor, jitter: o.BackoffJitter}
}

// next records a failure at now and returns how long to wait: the current
// base delay plus jitter, but never less than floor (a server's
// Retry-After).
func (b *backoff) next(now time.Time, floor time.Duration) time.Duration {
	if b.base == 0 || now.Sub(b.retried) > b.reset {
		b.base = b.initial
	}
	d := b.base
	if b.jitter > 0 {
		d += time.Duration(random.Fraction() * b.jitter * float64(d))
	}
	d = max(d, floor)
	b.base = min(time.Duration(float64(b.base)*b.factor), b.max)
	b.retried = now.Add(d)
	return d
}
