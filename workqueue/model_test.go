package workqueue

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// model is the reference a Queue is checked against: the rules of
// doc.go, written as directly as possible, with no concern for speed and
// no concurrency. Time is whole seconds on a FakeClock; the rate limiter is
// exponential from 1s up to 8s.
type model struct {
	now        time.Time
	queue      []int // FIFO of ready keys
	dirty      map[int]bool
	processing map[int]bool
	waiting    map[int]modelWait
	seq        int
	failures   map[int]int
	shut       bool
}

type modelWait struct {
	at  time.Time
	seq int
}

func (m *model) add(k int) {
	if m.shut || m.dirty[k] {
		return
	}
	m.dirty[k] = true
	if !m.processing[k] {
		m.queue = append(m.queue, k)
	}
}

func (m *model) addAfter(k int, d time.Duration) {
	if m.shut {
		return
	}
	if d <= 0 {
		m.add(k)
		return
	}
	at := m.now.Add(d)
	if w, ok := m.waiting[k]; ok {
		if at.Before(w.at) {
			m.waiting[k] = modelWait{at, w.seq}
		}
		return
	}
	m.seq++
	m.waiting[k] = modelWait{at, m.seq}
}

func (m *model) step(d time.Duration) {
	m.now = m.now.Add(d)
	due := slices.SortedFunc(maps.Keys(m.waiting), func(a, b int) int {
		return cmp.Or(m.waiting[a].at.Compare(m.waiting[b].at), cmp.Compare(m.waiting[a].seq, m.waiting[b].seq))
	})
	for _, k := range due {
		if !m.waiting[k].at.After(m.now) {
			delete(m.waiting, k)
			m.add(k)
		}
	}
}

func TestQueueMatchesAReferenceModelUnderRandomOperations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clock := NewFakeClock(epoch)
		q := New(Options[int]{Clock: clock, RateLimiter: NewExponentialRateLimiter[int](time.Second, 8*time.Second)})
		defer q.ShutDown()
		m := &model{now: epoch, dirty: map[int]bool{}, processing: map[int]bool{},
			waiting: map[int]modelWait{}, failures: map[int]int{}}
		keys := rapid.IntRange(0, 4)
		seconds := func(t *rapid.T, label string, lo, hi int) time.Duration {
			return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Second
		}

		t.Repeat(map[string]func(*rapid.T){
			"Add": func(t *rapid.T) {
				k := keys.Draw(t, "key")
				q.Add(k)
				m.add(k)
			},
			"AddAfter": func(t *rapid.T) {
				k, d := keys.Draw(t, "key"), seconds(t, "delay", -1, 5)
				q.AddAfter(k, d)
				m.addAfter(k, d)
			},
			"AddRateLimited": func(t *rapid.T) {
				k := keys.Draw(t, "key")
				q.AddRateLimited(k)
				if !m.shut {
					m.addAfter(k, min(time.Second<<m.failures[k], 8*time.Second))
					m.failures[k]++
				}
			},
			"Forget": func(t *rapid.T) {
				k := keys.Draw(t, "key")
				q.Forget(k)
				delete(m.failures, k)
			},
			"Get": func(t *rapid.T) {
				if len(m.queue) == 0 {
					// The model says Get blocks (or, shut down and clean,
					// reports it). A short deadline shows which.
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					defer cancel()
					_, err := q.Get(ctx)
					want := context.DeadlineExceeded
					if m.shut && len(m.dirty) == 0 {
						want = ErrShutDown
					}
					require.ErrorIs(t, err, want)
					return
				}
				key, err := q.Get(context.Background())
				require.NoError(t, err)
				require.Equal(t, m.queue[0], key, "Get hands out the oldest ready key")
				m.queue = m.queue[1:]
				delete(m.dirty, key)
				m.processing[key] = true
			},
			"Done": func(t *rapid.T) {
				k := keys.Draw(t, "key") // sometimes a key nobody holds
				if held := slices.Sorted(maps.Keys(m.processing)); len(held) > 0 && rapid.Bool().Draw(t, "held") {
					k = rapid.SampledFrom(held).Draw(t, "held key")
				}
				q.Done(k)
				if m.processing[k] {
					delete(m.processing, k)
					if m.dirty[k] {
						m.queue = append(m.queue, k)
					}
				}
			},
			"Step": func(t *rapid.T) {
				d := seconds(t, "step", 0, 4)
				clock.Step(d)
				m.step(d)
			},
			"ShutDown": func(t *rapid.T) {
				q.ShutDown()
				m.shut = true
				clear(m.waiting)
			},
			"ShutDownWithDrain": func(t *rapid.T) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // so it cannot wait: it reports whether the queue is drained
				err := q.ShutDownWithDrain(ctx)
				m.shut = true
				clear(m.waiting)
				if len(m.dirty) == 0 && len(m.processing) == 0 {
					require.NoError(t, err)
				} else {
					require.True(t, errors.Is(err, context.Canceled), "not drained, yet: %v", err)
				}
			},
			"": func(t *rapid.T) { // the check, after every step
				require.Equal(t, len(m.queue), q.Len())
				require.Equal(t, m.shut, q.ShuttingDown())
				q.mu.Lock()
				queued := slices.Clone(q.queue)
				due := map[int]time.Time{}
				for k, e := range q.waitingByKey {
					due[k] = e.at
				}
				q.mu.Unlock()
				require.True(t, slices.Equal(m.queue, queued), "queue order: model %v, queue %v", m.queue, queued)
				require.Equal(t, len(m.waiting), len(due), "waiting keys")
				for k, w := range m.waiting {
					require.Equal(t, w.at, due[k], "due time of %d", k)
				}
				for k := range 5 {
					require.Equal(t, m.failures[k], q.NumRequeues(k), "NumRequeues(%d)", k)
				}
				wantTimers := 0
				if !m.shut && len(m.waiting) > 0 {
					wantTimers = 1
				}
				require.Equal(t, wantTimers, clock.Timers(), "armed timers")
			},
		})
	})
}
