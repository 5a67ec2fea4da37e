package workqueue

import (
	"container/heap"
	"time"
)

// AddAfter adds key once d has passed: "look at this again in 30 s". With
// d ≤ 0 it is Add. A key can wait only once: if it is already waiting,
// the earlier due time wins. Waiting is separate from being queued: a key
// that is queued now and also waiting is added again when its delay is
// over (and deduplicated if it is still queued then). Keys due at the same
// time are added in the order they were first delayed. After shutdown
// AddAfter does nothing. Cost: O(log n) in the number of waiting keys.
//
// No goroutine sleeps per key: waiting keys sit in a min-heap by due time,
// and one timer is armed, for the earliest.
func (q *Queue[K]) AddAfter(key K, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addAfterLocked(key, d)
}

// addAfterLocked is AddAfter with q.mu held.
func (q *Queue[K]) addAfterLocked(key K, d time.Duration) {
	if q.shuttingDown {
		if q.trace != nil {
			q.emit(KindDropped, key, "shutting down")
		}
		return
	}
	if d <= 0 {
		q.addLocked(key, "")
		return
	}
	now := q.clock.Now()
	at := now.Add(d)
	movedEarlier := false
	if e, ok := q.waitingByKey[key]; ok {
		if !at.Before(e.at) {
			if q.trace != nil {
				q.emit(KindDeduplicated, key, "already waiting, due in "+e.at.Sub(now).String())
			}
			return
		}
		e.at = at
		heap.Fix(&q.waiting, e.index)
		movedEarlier = true
	} else {
		q.waitSeq++
		e := &waitEntry[K]{key: key, at: at, seq: q.waitSeq}
		heap.Push(&q.waiting, e)
		q.waitingByKey[key] = e
	}
	q.arm(now)
	// Traced only now that the timer is armed: a test that steps a
	// FakeClock on seeing "delayed" must find the timer there to fire.
	if q.trace != nil {
		detail := "in " + d.String()
		if movedEarlier {
			detail += ", moved earlier"
		}
		q.emit(KindDelayed, key, detail)
	}
}

// arm restores the timer invariant after the waiting heap changed: while
// the queue runs and keys wait, exactly one timer is armed, due when the
// earliest key is. It re-arms only if that time changed. The caller holds
// q.mu.
func (q *Queue[K]) arm(now time.Time) {
	if q.shuttingDown || len(q.waiting) == 0 {
		q.disarm()
		return
	}
	at := q.waiting[0].at
	if q.timer != nil && q.timerAt.Equal(at) {
		return
	}
	q.disarm()
	gen := q.timerGen
	q.timer = q.clock.AfterFunc(at.Sub(now), func() { q.fire(gen) })
	q.timerAt = at
}

// disarm stops the armed timer, if any, and starts a new generation, so
// that a timer whose function had already started when it was stopped
// finds itself outdated. The caller holds q.mu.
func (q *Queue[K]) disarm() {
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	q.timerGen++
}

// fire is the armed timer's function: it adds every key that is due, in
// due order, and arms the timer for the next. It runs on the timer's own
// goroutine (real clock) or inside FakeClock.Step.
func (q *Queue[K]) fire(gen uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if gen != q.timerGen || q.shuttingDown {
		return // replaced or stopped, but too late to stop this call
	}
	q.timer = nil
	now := q.clock.Now()
	for len(q.waiting) > 0 && !q.waiting[0].at.After(now) {
		e := heap.Pop(&q.waiting).(*waitEntry[K])
		delete(q.waitingByKey, e.key)
		q.addLocked(e.key, "delay over")
	}
	q.arm(now)
}

// waitEntry is one key waiting for its delay.
type waitEntry[K comparable] struct {
	key   K
	at    time.Time // when the key is due
	seq   uint64    // the order of first AddAfter, to break ties in at
	index int       // the entry's position in the heap, kept by waitHeap
}

// waitHeap is a min-heap of waiting keys, ordered by due time, then by
// seq. It implements heap.Interface; use it only through container/heap.
type waitHeap[K comparable] []*waitEntry[K]

func (h waitHeap[K]) Len() int { return len(h) }

func (h waitHeap[K]) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}

func (h waitHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *waitHeap[K]) Push(x any) {
	e := x.(*waitEntry[K])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[K]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil // let the backing array forget it
	*h = old[:len(old)-1]
	return e
}
