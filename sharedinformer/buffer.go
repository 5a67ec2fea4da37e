package sharedinformer

// ring is a FIFO of notifications that grows when full and shrinks back
// after a burst, so one slow handler's backlog costs memory only while it
// lasts. It is not safe for concurrent use; the listener's mutex guards it.
type ring[E any] struct {
	items []E // len(items) is the capacity; the live ones start at head
	head  int // index of the oldest item
	count int // number of live items
	min   int // the capacity it never shrinks below
}

func newRing[E any](min int) ring[E] {
	if min < 1 {
		min = 1
	}
	return ring[E]{items: make([]E, min), min: min}
}

// push appends e, doubling the capacity if full. Cost: O(1) amortised.
func (r *ring[E]) push(e E) {
	if r.count == len(r.items) {
		r.resize(2 * len(r.items))
	}
	r.items[(r.head+r.count)%len(r.items)] = e
	r.count++
}

// pop removes and returns the oldest item. ok is false if r is empty.
// When a burst has drained to a quarter of the capacity, the capacity
// halves (never below min), so the memory a burst took is given back.
func (r *ring[E]) pop() (e E, ok bool) {
	if r.count == 0 {
		return e, false
	}
	var zero E
	e = r.items[r.head]
	r.items[r.head] = zero // release the object for the garbage collector
	r.head = (r.head + 1) % len(r.items)
	r.count--
	if half := len(r.items) / 2; half >= r.min && r.count <= len(r.items)/4 {
		r.resize(half)
	}
	return e, true
}

// len returns the number of items waiting; cap the capacity.
func (r *ring[E]) len() int { return r.count }
func (r *ring[E]) cap() int { return len(r.items) }

// resize moves the live items to a new slice of capacity n (n >= count).
func (r *ring[E]) resize(n int) {
	items := make([]E, n)
	for i := range r.count {
		items[i] = r.items[(r.head+i)%len(r.items)]
	}
	r.items, r.head = items, 0
}
