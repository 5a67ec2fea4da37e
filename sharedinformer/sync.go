package sharedinformer

import "errors"

// Registration is what AddEventHandler returns: the handle of one handler
// on one Informer. Use it to wait for that handler's initial list, to see
// how far behind it is, and to remove it.
type Registration struct {
	name string
	// of is the informer the handler is registered on, for the sync
	// wait: its report, and whether it was released.
	of interface {
		reporter
		releasable
	}
	synced  <-chan struct{}
	stopped <-chan struct{}
	depth   func() int
	ended   func() error
}

// ErrHandlerRemoved is Registration.Err after RemoveEventHandler.
var ErrHandlerRemoved = errors.New("sharedinformer: the handler was removed")

// Err says why the handler stopped, once Stopped is closed:
// ErrHandlerRemoved after RemoveEventHandler, ErrInformerReleased when the
// informer's last holder released it (see Release), or the cause of the
// context that ended Run (context.Canceled, for most). It is nil while
// the handler may still be called.
func (r *Registration) Err() error { return r.ended() }

// Name is the handler's name, as used in traces and logs.
func (r *Registration) Name() string { return r.name }

// Synced returns a channel closed once the informer has synced and this
// handler has returned from every OnAdd of its initial list, or once the
// handler was removed (nothing more of its list will come).
func (r *Registration) Synced() <-chan struct{} { return r.synced }

// Stopped returns a channel closed once the handler's goroutine has ended,
// after RemoveEventHandler, when Run's context ended or when the
// informer's last holder released it (Err says which): no call of the
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

// syncStatus names the handler and its informer, with the informer's
// latest failure, for NotSyncedError.
func (r *Registration) syncStatus() (string, error) {
	name, err := r.of.syncStatus()
	return "handler " + r.name + " of " + name, err
}

// releasedSignal is closed once the handler's informer was released by
// its last holder: the handler will never sync.
func (r *Registration) releasedSignal() <-chan struct{} { return r.of.releasedSignal() }

// Depth returns how many notifications are waiting for this handler: the
// size of the backlog a slow handler has built up. 0 after removal.
func (r *Registration) Depth() int { return r.depth() }
