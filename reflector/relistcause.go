package reflector

// The causes of a relist: the Reason of every KindRelist trace event is
// one of these, a small fixed set fit to be a metric's label, where the
// event's Detail says the same for people, with resourceVersions and
// counts.
const (
	CauseExpired      = "expired"       // 410 Gone: the resourceVersion or a continue token is too old
	CauseTooLarge     = "too-large"     // the server has not reached the resourceVersion yet
	CauseWentBack     = "went-back"     // a watch event's resourceVersion went backwards
	CauseFailed       = "failed"        // a list or streaming list failed, or was cut: try again
	CauseStoreRefused = "store-refused" // the store refused the last list
	CauseNoRV         = "no-rv"         // the last list, or streamed list, had no resourceVersion
	CauseServedAgain  = "served-again"  // the resource was not served for a while, and is again
	CauseOtherKind    = "other-kind"    // with Options.Served: a watch or streamed list brought an object (a bookmark too) of another type, or of a kind the scheme does not know
)

// relistWhy is why a relist happens: its cause, one of the Cause
// constants, and a sentence for people. The zero value means no relist
// (the first list).
type relistWhy struct{ cause, text string }
