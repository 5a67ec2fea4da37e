package reflector

import "strings"

// The causes of a relist, as RelistCause names them: a small, fixed set,
// fit to be a metric's label value, where a KindRelist event's Detail
// holds resourceVersions and counts.
const (
	CauseExpired      = "expired"       // 410 Gone: the resourceVersion or a continue token is too old
	CauseTooLarge     = "too-large"     // the server has not reached the resourceVersion yet
	CauseWentBack     = "went-back"     // a watch event's resourceVersion went backwards
	CauseFailed       = "failed"        // a list or streaming list failed, or was cut: try again
	CauseStoreRefused = "store-refused" // the store refused the last list
	CauseNoRV         = "no-rv"         // the last list had no resourceVersion
	CauseOther        = "other"         // a reason this function does not know yet
)

// relistCauses maps a phrase of a KindRelist Detail to its cause, in the
// order they are tried. Each phrase is part of a reason the reflector
// writes (list.go, stream.go, watch.go); a test keeps the two in step.
var relistCauses = []struct{ phrase, cause string }{
	{"(410 Gone)", CauseExpired},
	{"too large for the server", CauseTooLarge},
	{"went back to", CauseWentBack},
	{"store refused", CauseStoreRefused},
	{"had no resourceVersion", CauseNoRV},
	{"failed", CauseFailed},
	{"streaming list was cut", CauseFailed},
	{"retry the streaming list", CauseFailed},
}

// RelistCause names the cause of a relist from the Detail of its
// KindRelist trace event: one of the Cause constants.
func RelistCause(detail string) string {
	for _, c := range relistCauses {
		if strings.Contains(detail, c.phrase) {
			return c.cause
		}
	}
	return CauseOther
}
