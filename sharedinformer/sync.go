package sharedinformer

import "context"

// Syncer is anything whose cache, or view of one, becomes synced once: an
// Informer (its cache holds the first full list) or a Registration (its
// handler has received that list).
type Syncer interface {
	// Synced returns a channel that is closed once synced.
	Synced() <-chan struct{}
}

// WaitForCacheSync blocks until every syncer has synced, and returns true;
// or until ctx ends, and returns false.
//
// Start workers only after it returns true (pitfall 4): before that, a
// worker reading through a lister sees a partial cache, and would, say,
// create objects that already exist. It waits on channels, so it returns
// as soon as the last syncer is done; there is no polling interval.
func WaitForCacheSync(ctx context.Context, syncers ...Syncer) bool {
	for _, s := range syncers {
		select {
		case <-s.Synced():
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Registration is what AddEventHandler returns: the handle of one handler
// on one Informer. Use it to wait for that handler's initial list, to see
// how far behind it is, and to remove it.
type Registration struct {
	name    string
	synced  <-chan struct{}
	stopped <-chan struct{}
	depth   func() int
}

// Name is the handler's name, as used in traces and logs.
func (r *Registration) Name() string { return r.name }

// Synced returns a channel closed once the informer has synced and this
// handler has returned from every OnAdd of its initial list, or once the
// handler was removed (nothing more of its list will come).
func (r *Registration) Synced() <-chan struct{} { return r.synced }

// Stopped returns a channel closed once the handler's goroutine has ended,
// after RemoveEventHandler or when Run's context ended: no call of the
// handler is in progress and none will start. Wait on it before tearing
// down what the handler uses.
func (r *Registration) Stopped() <-chan struct{} { return r.stopped }

// HasSynced reports whether Synced is closed.
func (r *Registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// Depth returns how many notifications are waiting for this handler: the
// size of the backlog a slow handler has built up. 0 after removal.
func (r *Registration) Depth() int { return r.depth() }
