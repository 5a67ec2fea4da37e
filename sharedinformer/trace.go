package sharedinformer

// The Kind values of the trace events an Informer emits: its handlers'
// with Stage informer.StageListener, and the transform's, with Stage
// informer.StageFIFO (where the object would have been queued).
const (
	// KindTransformRejected: the transform rejected an object, which
	// therefore was not queued; Key and ResourceVersion name it, Detail
	// says why. The cache keeps the version it had (see SetTransform).
	KindTransformRejected = "transform-rejected"
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
