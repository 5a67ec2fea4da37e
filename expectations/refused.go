package expectations

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Refused reports whether err, the error of a create, says the server
// did not store the object, so that no add event will come for it and
// the reconcile lowers the expectation by hand (CreationObserved). That
// is an API error with a 4xx status, but for two: a timeout (a 408, or
// an answer whose reason is Timeout, as kube-apiserver's 504 is), which
// may come after the object was stored, and AlreadyExists, where the name is
// taken, perhaps by this very object from a create whose answer was
// lost. A 5xx, or no answer at all (a cut connection, a context that
// ended), may also come after the object was stored: not refused. Its
// event then lowers the expectation, or, if it was never stored, the
// key waits out the TTL (TestACreateThatTimedOutAfterTheServerStoredItIsStillExpected,
// TestRefusedIsA4xxThatNeverStoredTheObject).
//
// err must be the answer to the only attempt: send the create with
// MaxRetries(0). client-go's rest client sends a POST again by itself
// after a 5xx with a Retry-After, and returns only the last attempt's
// error, so a 403 or 422 may follow a first attempt that was stored
// (TestRefusedJudgesACreateSentOnceNotOneTheClientRetried).
func Refused(err error) bool {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && !apierrors.IsAlreadyExists(err) && !apierrors.IsTimeout(err)
}
