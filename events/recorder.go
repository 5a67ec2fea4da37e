package events

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/reference"

	"github.com/listwatch/informer/internal/nilcheck"
)

// The two types of Event the API server accepts.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// The limits the API server puts on an Event's fields.
const (
	maxReason   = 128
	maxAction   = 128
	maxInstance = 128
	maxNote     = 1024
)

// Options configure a Recorder.
type Options struct {
	// Controller is the Event's reportingController: who acts, a
	// qualified name such as "example.com/secret-copier". Required.
	Controller string
	// Instance is the Event's reportingInstance: which replica, at most
	// 128 characters. Default: the host name (a Pod's name).
	Instance string
	// Scheme gives the kind and apiVersion of typed objects, whose
	// TypeMeta an informer's cache leaves empty: the factory's Scheme.
	// Required.
	Scheme *runtime.Scheme
	// QPS and Burst limit the Recorder's own writes to the API server,
	// creates and series updates together, so that a controller that
	// records in a loop cannot flood it. Default: 5 a second, burst 25.
	QPS   float64
	Burst int
	// MaxPending bounds the Events waiting to be created; a new Event
	// past it is dropped, counted (Stats.Dropped) and logged, never
	// waiting for Run: the Eventf that records it waits only for the log
	// handler, if it writes the warning (see Logger). Default: 1000.
	MaxPending int
	// RequestTimeout bounds each write, so that one the API server never
	// answers holds the Events after it back no longer than this; a
	// create that timed out is taken as may have landed, as one whose
	// connection was cut (see Run). Default: 30 s.
	RequestTimeout time.Duration
	// Logger receives a warning when Events are dropped or refused, at
	// most one every 10 s but for Run's last (the Events it leaves
	// unsent), never while the Recorder's lock is held: a
	// slow handler holds up only the call that logs (Run's write, or an
	// Eventf that drops its Event), not other Eventf calls.
	// Default: slog.Default().
	Logger *slog.Logger
}

// Recorder records Events about objects, as `kubectl describe` shows
// them: what a controller did and why it refused. It never makes the
// caller wait for the API server or for Run: Eventf checks its arguments
// and queues the Event; Run sends. (An Eventf that drops its Event logs
// it on the caller's goroutine: see Options.Logger.)
//
// Repeats of one Event (the same object at any resourceVersion, type,
// reason, action and note)
// within six minutes of the last are one Event with a series, as the
// events.k8s.io/v1 API intends: the first is created, and the count and
// last time of the repeats are written to it at most every 10 s.
//
// A Recorder is safe for concurrent use.
type Recorder struct {
	opts Options
	sink sink

	mu       sync.Mutex
	series   map[seriesKey]*series // every series seen in the last seriesWindow; guarded by mu
	queue    []*series             // series with something to send, in order; guarded by mu
	creating int                   // series in queue not yet created; guarded by mu
	swept    time.Time             // the last sweep of series; guarded by mu
	stats    Stats                 // guarded by mu
	warned   time.Time             // the last warning; guarded by mu
	warning  func()                // a warning to log once mu is released (unlock); guarded by mu
	running  bool                  // Run has been called; guarded by mu
	stopped  bool                  // Run has returned: nothing will be sent; guarded by mu
	seq      uint64                // numbers the Events' names, from a random start; guarded by mu
	wake     chan struct{}         // a token when the queue has news for Run
	flush    time.Duration         // seriesFlush; shorter in tests
}

// Stats counts what a Recorder did.
type Stats struct {
	Created  int64 // Events created; one taken as created (see Run), once a series update finds it
	Updated  int64 // series updates written
	Repeats  int64 // Eventf calls folded into a series
	Dropped  int64 // Events dropped: MaxPending reached, or Run returned before sending them
	Refused  int64 // writes the API server refused, or that failed
	Recorded int64 // Eventf calls accepted
}

// New returns a Recorder that writes Events with cfg. It makes no
// request; Run sends.
func New(cfg *rest.Config, opts Options) (*Recorder, error) {
	if cfg == nil {
		return nil, errors.New("events: New: the rest.Config is nil")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newRESTSink(cfg)
	if err != nil {
		return nil, fmt.Errorf("events: New: %w", err)
	}
	return newRecorder(s, opts), nil
}

func newRecorder(s sink, opts Options) *Recorder {
	return &Recorder{
		opts: opts, sink: s,
		series: map[seriesKey]*series{}, wake: make(chan struct{}, 1), flush: seriesFlush,
		seq: rand.Uint64(), // another Recorder's names do not collide with ours (newEventLocked)
	}
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Controller == "" {
		return o, errors.New("events: Options.Controller is empty: name the controller, such as example.com/secret-copier")
	}
	if errs := validation.IsQualifiedName(o.Controller); len(errs) > 0 {
		return o, fmt.Errorf("events: Options.Controller %q is not a qualified name: %s", o.Controller, strings.Join(errs, "; "))
	}
	if o.Scheme == nil {
		return o, errors.New("events: Options.Scheme is nil: pass the factory's Scheme, which knows the kinds of the objects you record about")
	}
	if o.Instance == "" {
		host, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("events: Options.Instance is empty and the host name is unknown: %w", err)
		}
		o.Instance = host
	}
	o.Instance = validUTF8(o.Instance) // its length as the server counts it
	if len(o.Instance) > maxInstance {
		return o, fmt.Errorf("events: Options.Instance %q is longer than %d characters", o.Instance, maxInstance)
	}
	switch {
	case !(o.QPS >= 0) || math.IsInf(o.QPS, 1):
		// NaN passes every comparison but this one, and as a rate.Limit
		// NaN or +Inf means no limit at all
		// (TestNewRefusesOptionsTheAPIServerWouldRefuse).
		return o, fmt.Errorf("events: Options.QPS %v must not be negative, NaN or infinite", o.QPS)
	case o.Burst < 0 || o.MaxPending < 0:
		return o, fmt.Errorf("events: Options.Burst %d and MaxPending %d must not be negative", o.Burst, o.MaxPending)
	case o.RequestTimeout < 0:
		return o, fmt.Errorf("events: Options.RequestTimeout %v must not be negative", o.RequestTimeout)
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.QPS == 0 {
		o.QPS = 5
	}
	if o.Burst == 0 {
		o.Burst = 25
	}
	if o.MaxPending == 0 {
		o.MaxPending = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// Eventf records an Event about regarding: its type (Normal or Warning),
// its reason (why, in UpperCamelCase, such as "SecretNotOurs"), its
// action (what the controller did or failed to do, such as "Create"),
// and a note for people, formatted from format and args and cut to the
// API server's 1024 bytes (bytes that are not UTF-8 count as the three
// of the U+FFFD that JSON carries them as). It returns at once (but for
// writing the warning of an Event it drops, see Options.Logger), with an
// error only for arguments the API server would refuse; the Event is
// sent by Run. One recorded after Run has returned, which nothing will
// send, is dropped, counted in Stats.Dropped and logged.
func (r *Recorder) Eventf(regarding runtime.Object, eventType, reason, action, format string, args ...any) error {
	ref, err := r.reference(regarding)
	if err != nil {
		return err
	}
	reason, action = validUTF8(reason), validUTF8(action) // their length as the server counts it
	switch {
	case eventType != Normal && eventType != Warning:
		return fmt.Errorf("events: Eventf: type %q is neither %q nor %q", eventType, Normal, Warning)
	case reason == "" || len(reason) > maxReason:
		return fmt.Errorf("events: Eventf: reason %q must be 1 to %d characters", reason, maxReason)
	case action == "" || len(action) > maxAction:
		return fmt.Errorf("events: Eventf: action %q must be 1 to %d characters", action, maxAction)
	}
	note := truncate(validUTF8(fmt.Sprintf(format, args...)), maxNote)
	key := seriesKey{regarding: *ref, eventType: eventType, reason: reason, action: action, note: note}
	key.regarding.ResourceVersion = "" // a change of the object by anyone does not end the series
	r.record(key, *ref)
	return nil
}

// reference returns the ObjectReference of obj, its kind and apiVersion
// from the Scheme where its TypeMeta is empty.
func (r *Recorder) reference(obj runtime.Object) (*corev1.ObjectReference, error) {
	if nilcheck.IsNil(obj) {
		return nil, errors.New("events: Eventf: the object the Event is about is nil")
	}
	ref, err := reference.GetReference(r.opts.Scheme, obj)
	if err != nil {
		return nil, fmt.Errorf("events: Eventf: the kind of %T: %w (add its group to Options.Scheme)", obj, err)
	}
	if ref.Name == "" {
		return nil, fmt.Errorf("events: Eventf: the %s the Event is about has no name", ref.Kind)
	}
	return ref, nil
}

// maxNamePrefix leaves room in an Event's name (253 characters at most)
// for the dot, up to 16 hex digits of time, a dot and up to 16 of a
// sequence number.
const maxNamePrefix = 200

// namePrefix makes an object's name the start of an Event's name, which
// must be a DNS subdomain: lower case, [a-z0-9.-], at most 253
// characters in all. Names of other objects may be longer, or hold
// upper case and colons (RBAC's "system:controller:..."): those
// characters become "-". A name left with nothing valid gives "event".
func namePrefix(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	prefix := strings.Trim(string(b[:min(len(b), maxNamePrefix)]), "-.")
	if prefix == "" || len(validation.IsDNS1123Subdomain(prefix)) > 0 {
		return "event"
	}
	return prefix
}

// validUTF8 replaces each byte of s that is not UTF-8 with U+FFFD, as
// encoding/json does on the way to the API server, which then counts
// the note's bytes: so the note is cut as the server will see it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// truncate cuts s, valid UTF-8, to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// Stats returns what the Recorder has done so far.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// newEventLocked is the Event a new series is created as, about
// regarding as it was at its first occurrence. Its name is unique: the
// object's name (made a valid prefix), the time and a sequence number
// that starts at random in each Recorder, so that two Events about one
// object at one clock reading do not collide, from one Recorder or from
// two. It must be: a create answered 409 AlreadyExists is taken as this
// Recorder's own create having landed
// (TestTwoRecordersRecordingAboutOneObjectAtOneInstantCreateTwoEvents).
func (r *Recorder) newEventLocked(k seriesKey, regarding corev1.ObjectReference, now time.Time) *eventsv1.Event {
	ns := k.regarding.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault // an Event about a cluster-wide object lives in default
	}
	r.seq++
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x.%x", namePrefix(k.regarding.Name), now.UnixNano(), r.seq), Namespace: ns},
		EventTime:  metav1.NewMicroTime(now),
		Regarding:  regarding,
		Type:       k.eventType, Reason: k.reason, Action: k.action, Note: k.note,
		ReportingController: r.opts.Controller, ReportingInstance: r.opts.Instance,
	}
}
