package workqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

// harness runs a real Queue and the model side by side. Each operation
// returns an error when they disagree.
type harness struct {
	clock *FakeClock
	q     *Queue[int]
	m     *model
}

func newHarness() *harness {
	clock := NewFakeClock(epoch)
	return &harness{
		clock: clock,
		q:     New(Options[int]{Clock: clock, RateLimiter: must(NewExponentialRateLimiter[int](time.Second, 8*time.Second))}),
		m: &model{now: epoch, dirty: map[int]bool{}, processing: map[int]bool{},
			waiting: map[int]modelWait{}, failures: map[int]int{}},
	}
}

func (h *harness) add(k int) { h.q.Add(k); h.m.add(k) }

func (h *harness) addAfter(k int, d time.Duration) { h.q.AddAfter(k, d); h.m.addAfter(k, d) }

func (h *harness) addRateLimited(k int) {
	h.q.AddRateLimited(k)
	if !h.m.shut {
		h.m.addAfter(k, min(time.Second<<h.m.failures[k], 8*time.Second))
		h.m.failures[k]++
	}
}

func (h *harness) forget(k int) { h.q.Forget(k); delete(h.m.failures, k) }

func (h *harness) get() error {
	m := h.m
	if len(m.queue) == 0 {
		// The model says Get blocks, which a short deadline shows; or, shut
		// down and clean, that it reports so at once, which must not
		// depend on how fast this machine reaches the call: a deadline
		// that passed first would be reported instead.
		wait, want := time.Millisecond, error(context.DeadlineExceeded)
		if m.shut && len(m.dirty) == 0 {
			wait, want = time.Minute, ErrShutDown
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, err := h.q.Get(ctx)
		if !errors.Is(err, want) {
			return fmt.Errorf("Get on an empty queue: %v, want %v", err, want)
		}
		return nil
	}
	key, err := h.q.Get(context.Background())
	if err != nil || key != m.queue[0] {
		return fmt.Errorf("Get: %d, %v; the oldest ready key is %d", key, err, m.queue[0])
	}
	m.queue = m.queue[1:]
	delete(m.dirty, key)
	m.processing[key] = true
	return nil
}

func (h *harness) done(k int) {
	h.q.Done(k)
	if h.m.processing[k] {
		delete(h.m.processing, k)
		if h.m.dirty[k] {
			h.m.queue = append(h.m.queue, k)
		}
	}
}

func (h *harness) step(d time.Duration) { h.clock.Step(d); h.m.step(d) }

func (h *harness) shutDown() {
	h.q.ShutDown()
	h.m.shut = true
	clear(h.m.waiting)
}

func (h *harness) shutDownWithDrain() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // so it cannot wait: it reports whether the queue is drained
	err := h.q.ShutDownWithDrain(ctx)
	h.m.shut = true
	clear(h.m.waiting)
	drained := len(h.m.dirty) == 0 && len(h.m.processing) == 0
	if drained && err != nil || !drained && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("ShutDownWithDrain: %v (drained: %v)", err, drained)
	}
	return nil
}

// check compares everything observable, after every operation.
func (h *harness) check() error {
	q, m := h.q, h.m
	if q.Len() != len(m.queue) || q.ShuttingDown() != m.shut {
		return fmt.Errorf("Len %d, ShuttingDown %v; model %d, %v", q.Len(), q.ShuttingDown(), len(m.queue), m.shut)
	}
	q.mu.Lock()
	queued := slices.Clone(q.queue)
	due := map[int]time.Time{}
	for k, e := range q.waitingByKey {
		due[k] = e.at
	}
	q.mu.Unlock()
	if !slices.Equal(m.queue, queued) {
		return fmt.Errorf("queue order: model %v, queue %v", m.queue, queued)
	}
	if len(m.waiting) != len(due) {
		return fmt.Errorf("waiting keys: model %d, queue %d", len(m.waiting), len(due))
	}
	for k, w := range m.waiting {
		if !w.at.Equal(due[k]) {
			return fmt.Errorf("due time of %d: model %v, queue %v", k, w.at, due[k])
		}
	}
	for k := range 5 {
		if m.failures[k] != q.NumRequeues(k) {
			return fmt.Errorf("NumRequeues(%d): model %d, queue %d", k, m.failures[k], q.NumRequeues(k))
		}
	}
	wantTimers := 0
	if !m.shut && len(m.waiting) > 0 {
		wantTimers = 1
	}
	if h.clock.Timers() != wantTimers {
		return fmt.Errorf("armed timers: %d, want %d", h.clock.Timers(), wantTimers)
	}
	return nil
}

func TestQueueMatchesAReferenceModelUnderRandomOperations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness()
		defer h.q.ShutDown()
		keys := rapid.IntRange(0, 4)
		seconds := func(t *rapid.T, label string, lo, hi int) time.Duration {
			return time.Duration(rapid.IntRange(lo, hi).Draw(t, label)) * time.Second
		}
		t.Repeat(map[string]func(*rapid.T){
			"Add":      func(t *rapid.T) { h.add(keys.Draw(t, "key")) },
			"AddAfter": func(t *rapid.T) { h.addAfter(keys.Draw(t, "key"), seconds(t, "delay", -1, 5)) },
			"AddRateLimited": func(t *rapid.T) {
				h.addRateLimited(keys.Draw(t, "key"))
			},
			"Forget": func(t *rapid.T) { h.forget(keys.Draw(t, "key")) },
			"Get":    func(t *rapid.T) { require.NoError(t, h.get()) },
			"Done": func(t *rapid.T) {
				k := keys.Draw(t, "key") // sometimes a key nobody holds
				if held := slices.Sorted(maps.Keys(h.m.processing)); len(held) > 0 && rapid.Bool().Draw(t, "held") {
					k = rapid.SampledFrom(held).Draw(t, "held key")
				}
				h.done(k)
			},
			"Step":              func(t *rapid.T) { h.step(seconds(t, "step", 0, 4)) },
			"ShutDown":          func(t *rapid.T) { h.shutDown() },
			"ShutDownWithDrain": func(t *rapid.T) { require.NoError(t, h.shutDownWithDrain()) },
			"":                  func(t *rapid.T) { require.NoError(t, h.check()) }, // after every step
		})
	})
}

// FuzzQueueOperations is the same property under go test -fuzz. Each
// input byte is one operation: its low 4 bits pick it, the high 4 bits are
// its argument (a key 0..4, a delay or a step in seconds).
func FuzzQueueOperations(f *testing.F) {
	f.Add([]byte{0x00, 0x10, 0x05, 0x06, 0x00, 0x21, 0x37, 0x05, 0x16})
	f.Add([]byte{0x12, 0x05, 0x22, 0x46, 0x17, 0x05, 0x08, 0x05, 0x06, 0x09})
	f.Fuzz(func(t *testing.T, ops []byte) {
		h := newHarness()
		defer h.q.ShutDown()
		for i, op := range ops {
			arg := int(op >> 4)
			var err error
			switch op & 0xf {
			case 0, 10:
				h.add(arg % 5)
			case 1:
				h.addAfter(arg%5, time.Duration(arg%7-1)*time.Second)
			case 2:
				h.addRateLimited(arg % 5)
			case 3:
				h.forget(arg % 5)
			case 4, 11, 12:
				err = h.get()
			case 5, 13, 14:
				h.done(arg % 5)
			case 6, 15:
				h.step(time.Duration(arg%5) * time.Second)
			case 8:
				h.shutDown()
			case 9:
				err = h.shutDownWithDrain()
			}
			if err == nil {
				err = h.check()
			}
			if err != nil {
				t.Fatalf("op %d (%#x): %v", i, op, err)
			}
		}
	})
}
