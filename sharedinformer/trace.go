package sharedinformer

// The Kind values of the trace events an Informer's handlers emit, all with
// Stage informer.StageListener.
const (
	// KindDelivered: a handler is about to be called. Detail names the
	// call, the handler and how many notifications still wait for it:
	// "update to audit-log, 3 waiting".
	KindDelivered = "delivered"
	// KindBufferWarning: more than BufferPolicy.WarnDepth notifications
	// wait for one handler. Emitted once per burst.
	KindBufferWarning = "buffer-warning"
	// KindHandlerPanic: a handler panicked; the panic was recovered and
	// reported, and the handler keeps receiving notifications.
	KindHandlerPanic = "handler-panic"
)
