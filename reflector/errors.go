package reflector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/internal/nilcheck"
)

// Error is what Options.OnError receives: which step failed, at which
// resourceVersion, and why. Unwrap gives the cause, so the apimachinery
// tests work on it directly: apierrors.IsForbidden(err),
// apierrors.IsNotFound(err) (a missing CRD), apierrors.IsResourceExpired(err).
type Error struct {
	// Op is the step that failed, named by its trace Kind: KindList,
	// KindWatch, KindWatchEvent (a bad event, or the store refused one),
	// KindReplace or KindResync.
	Op string
	// Name is the reflector's Options.Name.
	Name string
	// ResourceVersion is the resourceVersion the request asked for, if any.
	ResourceVersion string
	// Err is the cause.
	Err error
}

// Error says which reflector failed at what, and why.
func (e *Error) Error() string {
	rv := ""
	if e.ResourceVersion != "" {
		rv = " at resourceVersion " + e.ResourceVersion
	}
	return fmt.Sprintf("reflector %s: %s%s: %v", e.Name, e.Op, rv, e.Err)
}

// Unwrap returns the cause, so that errors.Is and apierrors.IsForbidden
// (and the like) see through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// The causes the reflector itself detects, wrapped in an *Error; test for
// them with errors.Is.
var (
	// ErrShortWatch: a watch ended within Tuning.ShortWatch of opening
	// without moving the resourceVersion forward. A server does that only
	// when something is wrong, so it is retried after the backoff, never at
	// once: otherwise a server that closes every watch could make the
	// reflector reopen watches in a tight loop. (A short watch that did
	// move it made progress; the re-watch rate limit bounds those.)
	ErrShortWatch = errors.New("the watch ended at once")
	// ErrResourceVersionWentBack: a watch event or bookmark carried a
	// resourceVersion older than the one the store is in sync with. An
	// etcd-backed server never does that (its resourceVersions are etcd
	// revisions, which only grow) unless its storage was restored from a
	// backup; the event is skipped and the reflector relists. The check
	// applies only when both resourceVersions are integers: the API calls
	// them opaque, and a server that is not etcd-backed may differ.
	ErrResourceVersionWentBack = errors.New("the resourceVersion went backwards")
	// ErrUnexpectedObject: the server sent an object that is not a T, or a
	// nil one, where a T belongs. A watch event is skipped (an ERROR event
	// without a Status ends its watch, opened again after the backoff) and
	// a list retried; with Options.Served, an object of another type (or of a
	// kind the client's scheme does not know) asks it first, and a watch
	// event of one ends the watch and relists (cause other-kind).
	ErrUnexpectedObject = errors.New("unexpected object")
	// ErrNoResourceVersion: a list came without a resourceVersion, so no
	// watch could start from it. The list is retried.
	ErrNoResourceVersion = errors.New("the list has no resourceVersion")
	// ErrNotServed: a LIST or WATCH failed with 404 Not Found (or brought
	// objects that are not T's) and the server's discovery lists the
	// resource in no version (its CRD was deleted, say), or lists it
	// cluster-scoped while the reflector reads one namespace
	// (Serving.ClusterScoped), or holding another kind
	// (Serving.OtherKind); see Options.Served. Reported once; the
	// reflector then waits, with no LIST or WATCH, asking Served (the
	// server's discovery, as a factory's does) after each backoff until
	// it lists the resource again. The failure is wrapped too, so apierrors.IsNotFound sees a
	// 404. A resource
	// served in another version is not gone: that is a
	// *VersionNotServedError, which this does not match.
	ErrNotServed = errors.New("the server no longer serves the resource")
	// ErrStreamEnded: a streaming list ended before its initial-events-end
	// bookmark: a cut connection, so the reflector streams again, or, after
	// Tuning.StreamEndedLimit such ends (see there), a server that ignores
	// sendInitialEvents, so it lists instead.
	ErrStreamEnded = errors.New("the streaming list ended before its initial-events-end bookmark")
)

// VersionNotServedError is what the reflector reports, inside an *Error,
// when a LIST or WATCH failed with 404 Not Found and the server's
// discovery no longer lists the resource in the version the reflector
// reads but does in others: a CRD moved to a new version (see
// Options.Served). Moving a version deletes no object, so the reflector
// keeps its store as it was and reports no deletions; it waits, without
// requests, until the version is served again. The store is then a
// snapshot from when the watch ended: changes since are not in it, nor
// deletions (a CRD deleted and created again in another version while
// the watch was down looks the same from discovery). To follow the
// objects, read a version in Served. Reported once per change of
// discovery's answer.
type VersionNotServedError struct {
	// Version is the version the reflector reads, no longer served
	// ("v1beta1"); "" if Options.Served did not say.
	Version string
	// Served are the versions that serve the resource now, preferred
	// first ("v1"); never empty.
	Served []string
	// Err is the 404 that made the reflector ask discovery.
	Err error
}

// Error says which version went and which are served, and what the
// store does meanwhile.
func (e *VersionNotServedError) Error() string {
	version := "version " + e.Version
	if e.Version == "" {
		version = "the version read"
	}
	return fmt.Sprintf("%s is no longer served, but the resource is, as %s: the store keeps what it held, unwatched, and reports no deletions (changes and deletions since the watch ended are not in it); read %s to follow them (waiting until %s is served again): %v",
		version, strings.Join(e.Served, ", "), e.Served[0], version, e.Err)
}

// Unwrap returns the 404, so that apierrors.IsNotFound sees it.
func (e *VersionNotServedError) Unwrap() error { return e.Err }

// isExpired reports a 410: the resourceVersion (or continue token) asked
// for is older than the server still has. Servers say Expired; before 1.18
// some said Gone.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLarge reports "Too large resource version": the server has not yet
// seen the resourceVersion asked for, as happens for a moment after an
// apiserver restarts while its watch cache fills.
func isTooLarge(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	// Servers before 1.18.6 said so only in the message of a 504.
	return apierrors.IsTimeout(err) && strings.Contains(err.Error(), "Too large resource version")
}

// statusError turns an ERROR event's object, which should be a Status,
// into the error it reports. A nil one, typed nil included, is no Status
// (apierrors.FromObject would panic on a typed nil one).
func statusError(obj runtime.Object) error {
	if nilcheck.IsNil(obj) {
		return ownFault{fmt.Errorf("%w: an ERROR event with a nil %T instead of a Status", ErrUnexpectedObject, obj)}
	}
	err := apierrors.FromObject(obj)
	var notStatus *apierrors.UnexpectedObjectError
	if errors.As(err, &notStatus) {
		return ownFault{fmt.Errorf("%w: an ERROR event with %T instead of a Status", ErrUnexpectedObject, obj)}
	}
	return err
}

// ownFault marks an ErrUnexpectedObject that is the answer's own fault:
// bytes that do not decode, a list with no items or no kind, an ERROR
// event without a Status. It says nothing of what the resource holds, so
// with Options.Served it does not ask whether the resource now holds
// another kind; the list is retried after the backoff. An object of
// another type or kind is never one.
type ownFault struct{ error }

func (f ownFault) Unwrap() error { return f.error }

// isOwnFault reports whether err is, or wraps, an ownFault.
func isOwnFault(err error) bool {
	var f ownFault
	return errors.As(err, &f)
}

// unknownKind reports whether err, a watch's ERROR event's, is the
// client's failure to decode an event whose kind its scheme does not
// know (a CRD created again holding another kind, say); with
// Options.Served it is taken as an object that is not a T. client-go's
// watch decoder reports every failure to read the stream as an internal
// error caused by "ClientWatchDecoding", a connection lost or a stream
// reset too, which are watched again as before: only the scheme's own
// words ("no kind ... is registered for ...") say the kind is unknown
// (TestAWatchCutByTheTransportIsWatchedAgainFromItsResourceVersionWithServed).
func unknownKind(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == "ClientWatchDecoding" && strings.Contains(c.Message, "no kind ") && strings.Contains(c.Message, " is registered for ") {
				return true
			}
		}
	}
	return false
}

// retryAfter is the wait the server asked for (a 429's or 5xx's
// Retry-After), or 0.
func retryAfter(err error) time.Duration {
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok {
		return time.Duration(seconds) * time.Second
	}
	return 0
}
