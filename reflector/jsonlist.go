package reflector

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kjson "sigs.k8s.io/json"

	"github.com/listwatch/informer"
)

// A JSON LIST answer is read here as it arrives, as decodeProtobufList
// reads protobuf: the items are cut apart by jsonScanner as their bytes
// come in and decoded, a batch at a time, on every core by itemDecoder,
// so that the whole body, and a list holding every object, never sit in
// memory beside the cache. This is how custom resources, unstructured
// informers, metadata-only ones read as JSON (WithJSON), and any Go type
// read as JSON relist in parts.
//
// The answer is one JSON object,
//
//	{"kind":"ConfigMapList","apiVersion":"v1","metadata":{…},"items":[{…},{…}]}
//
// with its keys in any order. kube-apiserver writes a built-in type's
// list in the order above, but a custom resource's list with its keys
// sorted: "items" before "kind" and "metadata". So an item cannot always
// be checked against the list's kind when it arrives. Custom resources'
// items carry their own kind, which is checked instead; the list's kind
// is checked when it comes, and a list of the wrong kind is an error even
// if some of its items were handed over already (as with a list cut
// half-way, the caller finishes nothing on its word).

// jsonItemDecoder decodes one item of a JSON list. head is the list's
// kind and apiVersion as far as they came before the items (empty if
// they come after; an apiVersion not named by then is the version asked,
// see itemHead); index is the item's place in the list, for errors.
type jsonItemDecoder[T informer.Object] func(data []byte, head metav1.TypeMeta, index int) (T, error)

// decodeJSONList reads a LIST answer in JSON from r, decoding its items
// as they arrive and handing them to part, in list order, a batch at a
// time. want is the list's kind and apiVersion, such as ConfigMapList in
// v1; an empty Kind accepts any kind (a custom resource's CRD may name
// its list kind as it likes, GizmoCollection say), an empty APIVersion
// any apiVersion. An error from part stops the reading and is
// returned as it is; a failure to read the answer is returned as such
// (see readFailure), not as a bad answer.
func decodeJSONList[T informer.Object](r io.Reader, want metav1.TypeMeta, decodeItem jsonItemDecoder[T], part func([]T) error) (metav1.ListMeta, error) {
	s := &jsonScanner{r: bufio.NewReaderSize(r, 64<<10)}
	var head metav1.TypeMeta
	var lm metav1.ListMeta
	var d *itemDecoder[T]
	var held []T // items read as of the version asked before the list named its own
	holding := false
	err := s.eachField(func(key string) error {
		switch key {
		case "kind":
			return s.decodeValue(&head.Kind)
		case "apiVersion":
			return s.decodeValue(&head.APIVersion)
		case "metadata":
			return s.decodeValue(&lm)
		case "items":
			if d != nil {
				return errors.New(`two "items" fields`)
			}
			seen := itemHead(head, want)
			if head.APIVersion != "" && want.APIVersion != "" && head.APIVersion != want.APIVersion {
				// Known to be wrong before any item is handed over, whether
				// or not its kind came yet (a custom resource's list names
				// its keys in order: apiVersion, items, kind;
				// TestAJSONListNamingAnotherAPIVersionBeforeItsItemsAndItsKindAfterHandsNoItemOver).
				return fmt.Errorf("%w: the LIST answered apiVersion %q, want %q", ErrUnexpectedObject, head.APIVersion, want.APIVersion)
			}
			if err := checkListType(seen, want); err != nil && seen.Kind != "" && seen.APIVersion != "" {
				return err // known to be wrong before any item is handed over
			}
			deliver := part
			if head.APIVersion == "" {
				// The list has not named its version yet (kube-apiserver
				// names it first) and may name another after its items:
				// hand nothing over until it has said
				// (TestAJSONListNamingAnotherAPIVersionAfterItsItemsHandsNoItemOverAsInTheVersionAsked,
				// TestAJSONListNamingItsTypeOnlyAfterItsItemsHandsNoItemOverBeforeItsVersionIsChecked).
				holding = true
				deliver = func(objs []T) error {
					held = append(held, objs...)
					return nil
				}
			}
			d = newItemDecoder(func(data []byte, index int) (T, error) { return decodeItem(data, seen, index) }, deliver)
			return s.eachItem(d.addWith)
		}
		return s.skipValue()
	})
	if d != nil {
		if failed := d.finish(); failed != nil {
			return metav1.ListMeta{}, failed // an item that did not decode, or part's own error
		}
	}
	if err == nil {
		err = checkListType(head, want)
	}
	if err == nil && holding && len(held) > 0 {
		if err = part(held); err != nil {
			return metav1.ListMeta{}, err // part's own error, as it is
		}
	}
	if err == nil && d == nil {
		// Taken as an empty list, it would delete the whole cache.
		err = ownFault{fmt.Errorf("%w: the LIST answer has no items", ErrUnexpectedObject)}
	}
	if err == nil {
		err = s.end()
	}
	if failed := readFailure(err); failed != nil {
		return metav1.ListMeta{}, failed
	}
	if err != nil {
		if !errors.Is(err, ErrUnexpectedObject) {
			err = ownFault{fmt.Errorf("%w: the LIST answer is not a JSON list: %v", ErrUnexpectedObject, err)}
		}
		return metav1.ListMeta{}, err
	}
	return metav1.ListMeta{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue, RemainingItemCount: lm.RemainingItemCount}, nil
}

// eachItem reads the items array (or null), handing each item to add,
// which reads it with the read it is given.
func (s *jsonScanner) eachItem(add func(read func([]byte) ([]byte, error)) error) error {
	if c, err := s.peek(); err == nil && c == 'n' {
		var null any
		return s.decodeValue(&null)
	}
	if err := s.expect('['); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := s.peek()
		if err != nil {
			return unexpectedEOF(err)
		}
		if c == ']' {
			_, _ = s.r.Discard(1)
			return nil
		}
		if i > 0 {
			if err := s.expect(','); err != nil {
				return err
			}
			if c, err = s.peek(); err != nil {
				return unexpectedEOF(err)
			}
		}
		if c != '{' {
			return ownFault{fmt.Errorf("%w: list item %d is not a JSON object", ErrUnexpectedObject, i)}
		}
		if err := add(s.appendValue); err != nil {
			return err
		}
	}
}

// itemHead is the kind and apiVersion a list's items are read with, given
// those the list named before them (head) and those the request asked
// for (want). A list that names its kind but not, or not yet, its
// apiVersion is taken as in the version asked: apimachinery writes a CBOR
// list's apiVersion after its items, and a server not built on it may
// name none (an unstructured list that names none is in the version asked,
// see checkListType). An apiVersion the list names after its items must
// still be the version asked (checkListType, once the list is read)
// (TestAJSONUnstructuredListThatNamesNoAPIVersionIsTakenAsInTheVersionAsked,
// TestACBORListsItemsAreReadAsOfTheVersionAskedAndTheListMustBeInIt).
func itemHead(head, want metav1.TypeMeta) metav1.TypeMeta {
	if head.Kind != "" && head.APIVersion == "" {
		head.APIVersion = want.APIVersion
	}
	return head
}

// checkListType checks the kind and apiVersion a LIST answered with
// against want (see decodeJSONList).
func checkListType(got, want metav1.TypeMeta) error {
	switch {
	case got.Kind == "":
		return ownFault{fmt.Errorf("%w: the LIST answer names no kind", ErrUnexpectedObject)}
	case want.Kind != "" && got.Kind != want.Kind:
		return fmt.Errorf("%w: the LIST answered kind %q, want %q", ErrUnexpectedObject, got.Kind, want.Kind)
	case want.APIVersion != "" && got.APIVersion != want.APIVersion && (got.APIVersion != "" || want.Kind != ""):
		// An unstructured list (want names no kind) that names no
		// apiVersion is taken as in the version asked, as before the
		// unstructured lister-watcher named one.
		return fmt.Errorf("%w: the LIST answered %s in apiVersion %q, want %q", ErrUnexpectedObject, got.Kind, got.APIVersion, want.APIVersion)
	}
	return nil
}

// typedJSONItem decodes an item into a Go type, as the API machinery's
// JSON serializer does (case-sensitive, integers kept as integers). An
// item that names its kind must name itemKind: a custom resource's items
// do, and are checked here, since its list names its kind only after them.
func typedJSONItem[T informer.Object](itemKind string) jsonItemDecoder[T] {
	return func(data []byte, _ metav1.TypeMeta, index int) (T, error) {
		obj := newObject[T]()
		var zero T
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, obj); err != nil {
			// An item of another kind may fail to decode into T before
			// its kind is read: that is news of what the resource holds,
			// not the item's own fault.
			var head metav1.TypeMeta
			if kjson.UnmarshalCaseSensitivePreserveInts(data, &head) == nil && head.Kind != "" && head.Kind != itemKind {
				return zero, fmt.Errorf("%w: list item %d is of kind %q, want %q", ErrUnexpectedObject, index, head.Kind, itemKind)
			}
			return zero, ownFault{fmt.Errorf("%w: list item %d: %v", ErrUnexpectedObject, index, err)}
		}
		if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind != "" && kind != itemKind {
			return zero, fmt.Errorf("%w: list item %d is of kind %q, want %q", ErrUnexpectedObject, index, kind, itemKind)
		}
		return obj, nil
	}
}

// unstructuredJSONItem decodes an item into an Unstructured, as the API
// machinery's UnstructuredList does: an item that names neither its kind
// nor its apiVersion (a built-in type's) takes the list's.
func unstructuredJSONItem(data []byte, head metav1.TypeMeta, index int) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, ownFault{fmt.Errorf("%w: list item %d: %v", ErrUnexpectedObject, index, err)}
	}
	return unstructuredItem(m, head, index)
}

// unstructuredItem is a list item's fields as an Unstructured: an item
// that names neither its kind nor its apiVersion takes the list's.
func unstructuredItem(m map[string]any, head metav1.TypeMeta, index int) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" && u.GetAPIVersion() == "" {
		if head.Kind == "" || head.APIVersion == "" {
			return nil, ownFault{fmt.Errorf("%w: list item %d names no kind and apiVersion, and the list names no %s ahead of its items for it to take", ErrUnexpectedObject, index, missingType(head))}
		}
		u.SetKind(strings.TrimSuffix(head.Kind, "List"))
		u.SetAPIVersion(head.APIVersion)
	}
	return u, nil
}

// missingType names what of a kind and apiVersion head lacks.
func missingType(head metav1.TypeMeta) string {
	switch {
	case head.Kind == "" && head.APIVersion == "":
		return "kind and apiVersion"
	case head.Kind == "":
		return "kind"
	default:
		return "apiVersion"
	}
}
