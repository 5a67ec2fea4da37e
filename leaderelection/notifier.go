package leaderelection

import "sync"

// notifier calls OnNewLeader in a goroutine of its own, one call at a
// time, in the order the holders were observed. Run's goroutine only
// queues a holder and goes on: a slow callback cannot delay a renew,
// which is what would end a term early.
type notifier struct {
	call func(identity string) // nil: nothing to call

	mu      sync.Mutex
	queue   []string      // guarded by mu; holders not yet handed to call
	wake    chan struct{} // one pending wake-up
	stopped chan struct{} // closed by stop
	done    chan struct{} // closed when the goroutine has returned
}

// startNotifier starts the goroutine that calls call (if not nil).
func startNotifier(call func(string)) *notifier {
	n := &notifier{call: call, wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{})}
	if call == nil {
		close(n.done)
		return n
	}
	go n.loop()
	return n
}

// notify queues identity for OnNewLeader.
func (n *notifier) notify(identity string) {
	if n.call == nil {
		return
	}
	n.mu.Lock()
	n.queue = append(n.queue, identity)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// stop delivers what is queued, then ends the goroutine and waits for
// it: Run returns only after its last OnNewLeader call returned.
func (n *notifier) stop() {
	if n.call != nil {
		close(n.stopped)
	}
	<-n.done
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		n.mu.Lock()
		queued := n.queue
		n.queue = nil
		n.mu.Unlock()
		for _, identity := range queued {
			n.call(identity)
		}
		select {
		case <-n.wake:
		case <-n.stopped:
			n.mu.Lock()
			rest := n.queue
			n.mu.Unlock()
			for _, identity := range rest {
				n.call(identity)
			}
			return
		}
	}
}
