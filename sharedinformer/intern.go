package sharedinformer

import (
	"sync"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Objects of one kind repeat much of what they carry, and a decoder gives
// each its own copy of it: every Widget of 100,000 holds its apiVersion,
// "bench.listwatch.dev/v1", and its one managedFields entry holds the
// same manager, apiVersion, field set and, for objects written in the same
// second, the same time as its neighbours'. The interner keeps one copy
// of each such value and points every object the cache takes at it: 231
// of a Widget's 2,173 bytes, measured at 100k (docs/17-at-scale.md,
// "Sharing what objects repeat").
//
// What it shares, and why no more:
//
//   - TypeMeta's apiVersion and kind; ObjectMeta's namespace and
//     generateName; each owner reference's apiVersion, kind, name and UID
//     (a ReplicaSet's pods all name it); each managedFields entry's
//     manager, operation, apiVersion, fieldsType and subresource strings,
//     and its Time and FieldsV1, by value.
//   - Not labels and annotations: they are maps the object owns, and to
//     share a value is to write into the map, which can make the runtime
//     grow it (a full small map grows on any write); their values are
//     mostly short, where sharing frees little (Go's allocator packs
//     strings of under 16 bytes into blocks together: measured, nothing
//     on the Widgets), and a long one (the last applied configuration)
//     is rarely repeated. Nor an object's own name, UID or
//     resourceVersion, which no two objects share.
//   - An unstructured object shares its managedFields entries, whole,
//     and nothing else (internunstructured.go says why).
//
// Sharing is safe because nobody changes a cached object (pitfall 2):
// strings are immutable, and what is shared by pointer (a managedFields
// entry's Time and FieldsV1, an unstructured object's whole entry) is
// shared only among objects the informer hands out, cached objects and
// deletes' final states; DeepCopy copies all of it. A reader that
// breaks the rule and changes a shared time or field set in place changes
// it for every object that holds it: those cached so far, which the
// mutation detector names, and any the informer has received and not yet
// cached, which it does not (their copies are taken as they are cached).
// The table checks a kept value against what it was kept for before
// handing it out again, so objects received later hold what the server
// sent (TestAMutationOfOneCachedObjectNeverReachesObjectsCachedAfterIt).
//
// The interner writes into the object, so it runs on an object fresh from
// the reflector (or the transform) before anything else can read it, and
// never on one already cached; and it writes a field only when that
// changes it, so an object whose values are already the table's is not
// written at all.
//
// The table is bounded: once its values, each counted with its map
// entry (entryBytes), pass internBudget bytes it starts afresh, and a
// value longer than internLongest is never kept, so what the interner
// holds beyond what the cache holds anyway is at most about internBudget.
// Sharing then starts again from the next object; objects already cached
// keep what they point at.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
	fields  map[string]*metav1.FieldsV1
	times   map[time.Time]*metav1.Time
	entries map[entryKey]map[string]any // unstructured managedFields entries
	bytes   int                         // the size of the values held, toward internBudget
}

const (
	internBudget  = 1 << 20
	internLongest = 64 << 10
	// entryBytes is what a table entry costs beside its value: its slot
	// in a map (key and value headers, control byte, spare room) and,
	// for a field set, the FieldsV1 pointed at (a time counts its own
	// struct).
	entryBytes = 64
)

// share points obj's repeated values (above) at the interner's copies.
// An object that is neither unstructured nor has a typed ObjectMeta is
// left as it is.
func (in *interner) share(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		in.shareUnstructured(u)
		return
	}
	meta, ok := objectMeta(obj)
	if !ok {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if tm, ok := obj.GetObjectKind().(*metav1.TypeMeta); ok {
		shareString(in, &tm.APIVersion)
		shareString(in, &tm.Kind)
	}
	shareString(in, &meta.Namespace)
	shareString(in, &meta.GenerateName)
	for i := range meta.OwnerReferences {
		o := &meta.OwnerReferences[i]
		shareString(in, &o.APIVersion)
		shareString(in, &o.Kind)
		shareString(in, &o.Name)
		shareString(in, &o.UID)
	}
	for i := range meta.ManagedFields {
		m := &meta.ManagedFields[i]
		shareString(in, &m.Manager)
		shareString(in, &m.Operation)
		shareString(in, &m.APIVersion)
		shareString(in, &m.FieldsType)
		shareString(in, &m.Subresource)
		if t := in.time(m.Time); t != m.Time {
			m.Time = t
		}
		if f := in.fieldSet(m.FieldsV1); f != m.FieldsV1 {
			m.FieldsV1 = f
		}
	}
}

// objectMeta is obj's ObjectMeta, if its type embeds one, as every
// generated type and PartialObjectMetadata do.
func objectMeta(obj runtime.Object) (*metav1.ObjectMeta, bool) {
	a, ok := obj.(interface{ GetObjectMeta() metav1.Object })
	if !ok {
		return nil, false
	}
	meta, ok := a.GetObjectMeta().(*metav1.ObjectMeta)
	return meta, ok && meta != nil
}

// shareString replaces *s with the table's copy of the same text, or
// makes *s that copy. It writes *s only when it changes, so an object
// whose values are already the table's is not written at all.
func shareString[S ~string](in *interner, s *S) {
	text := string(*s)
	if text == "" || len(text) > internLongest {
		return
	}
	if kept, ok := in.strings[text]; ok {
		if unsafe.StringData(kept) != unsafe.StringData(text) {
			*s = S(kept)
		}
		return
	}
	in.makeRoom(len(text))
	in.strings[text] = text
}

// time is the table's *metav1.Time for t's instant, or t made so. A
// kept time no longer equal to the instant it was kept for was changed
// in place by a reader (pitfall 2): it is not handed out again, and t
// takes its place.
func (in *interner) time(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	if kept, ok := in.times[t.Time]; ok && kept.Time == t.Time {
		return kept
	}
	in.makeRoom(int(unsafe.Sizeof(*t)) + 8) // the time, which the table keeps alive, rounded to its size class
	in.times[t.Time] = t
	return t
}

// fieldSet is the table's *metav1.FieldsV1 with f's bytes, or f made so.
// An empty one is left as it is: it saves nothing, and a nil and an
// empty one (absent and empty on the wire) would look alike in the
// table. A kept one whose bytes were changed in place is not handed out
// again, as for times. The table's key is a copy of the bytes, counted.
// The bytes are read through FieldsV1's methods, which apimachinery keeps
// for both of its representations (a []byte by default; under the build
// tag fieldsv1string, an interned string of its own).
func (in *interner) fieldSet(f *metav1.FieldsV1) *metav1.FieldsV1 {
	raw := f.GetRawBytes()
	if len(raw) == 0 || len(raw) > internLongest {
		return f
	}
	if kept, ok := in.fields[string(raw)]; ok && kept.Equal(*f) {
		return kept
	}
	in.makeRoom(2 * len(raw))
	in.fields[string(raw)] = f
	return f
}

// makeRoom counts an entry of n more bytes toward internBudget, starting
// the table afresh first if it would pass it, and makes its maps on first
// use.
func (in *interner) makeRoom(n int) {
	n += entryBytes
	if in.strings == nil || in.bytes+n > internBudget {
		in.strings = map[string]string{}
		in.fields = map[string]*metav1.FieldsV1{}
		in.times = map[time.Time]*metav1.Time{}
		in.entries = map[entryKey]map[string]any{}
		in.bytes = 0
	}
	in.bytes += n
}
