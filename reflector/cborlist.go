package reflector

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	"github.com/listwatch/informer"
)

// A CBOR LIST answer (KEP-4222: kube-apiserver with the
// CBORServingAndStorage feature gate, alpha in 1.37) is read here as it
// arrives, as decodeJSONList reads JSON: the items are cut apart by
// cborScanner and decoded, a batch at a time, on every core by
// itemDecoder. The answer is the JSON list's fields as one CBOR map,
// after tag 55799:
//
//	55799({"apiVersion": "…", "items": [{…}, {…}], "kind": "GizmoList", "metadata": {…}})
//
// with its keys in any order (kube-apiserver writes a custom resource's
// list as it writes the JSON: "items" before "kind"; apimachinery's CBOR
// serializer, keys shortest first: "kind", "items", "metadata",
// "apiVersion"), so the same checks apply: items that name their own
// kind are taken as they come, and the list's kind is checked when it
// comes.

// cborItemDecoder decodes one item of a CBOR list; head and index as for
// jsonItemDecoder.
type cborItemDecoder[T informer.Object] func(data []byte, head metav1.TypeMeta, index int) (T, error)

// decodeCBORList reads a LIST answer in CBOR from r, as decodeJSONList
// reads one in JSON: the same want, part and errors.
func decodeCBORList[T informer.Object](r io.Reader, want metav1.TypeMeta, decodeItem cborItemDecoder[T], part func([]T) error) (metav1.ListMeta, error) {
	s := &cborScanner{r: bufio.NewReaderSize(r, 64<<10)}
	s.skipSelfDescribed()
	var head metav1.TypeMeta
	var lm map[string]any
	var d *itemDecoder[T]
	// later holds the items that name no kind and apiVersion of their
	// own and came before the list's (kube-apiserver writes a list's
	// "items" first and its "apiVersion" and "kind" last; a built-in
	// resource's items name neither): they are decoded once the list's
	// are known. Items that name theirs (a custom resource's) are
	// decoded as they come.
	var later [][]byte
	var deferred bool
	err := s.eachEntry(func(key string) error {
		switch key {
		case "kind":
			return s.decodeValue(&head.Kind)
		case "apiVersion":
			return s.decodeValue(&head.APIVersion)
		case "metadata":
			// A map, not a ListMeta: direct decodes strictly, and a field
			// added to ListMeta tomorrow must not fail today's list.
			return s.decodeValue(&lm)
		case "items":
			if d != nil {
				return errors.New(`two "items" entries`)
			}
			// apimachinery writes a CBOR map's keys shortest first:
			// "kind", "items", "metadata", "apiVersion". The items are
			// read as of the version the request named, as they come,
			// and the list's apiVersion, last, must be that version
			// (checkListType below); held for it, a built-in
			// resource's items would wait whole
			// (TestACBORListOfABuiltInResourceIsHandedOverInPartsBeforeItsAnswerEnds).
			seen := itemHead(head, want)
			if err := checkListType(seen, want); err != nil && seen.Kind != "" && seen.APIVersion != "" {
				return err // known to be wrong before any item is handed over
			}
			d = newItemDecoder(func(data []byte, index int) (T, error) { return decodeItem(data, seen, index) }, part)
			if seen.Kind != "" && seen.APIVersion != "" {
				return s.eachItem(d.addWith)
			}
			// The first item decides: if it names its type, the items
			// are decoded as they come; if not, they wait for the list's.
			deferred = true
			first := true
			return s.eachItem(func(read func([]byte) ([]byte, error)) error {
				if !first && len(later) == 0 {
					return d.addWith(read)
				}
				raw, err := read(nil)
				if err != nil {
					return err
				}
				if first {
					first = false
					if namesItsType(raw) {
						return d.addWith(func(buf []byte) ([]byte, error) { return append(buf, raw...), nil })
					}
				}
				later = append(later, raw)
				return nil
			})
		}
		return s.skipValue()
	})
	if deferred && d != nil {
		if failed := d.finish(); failed != nil {
			return metav1.ListMeta{}, failed
		}
		d = nil
		if err == nil {
			err = checkListType(head, want)
		}
		seen := itemHead(head, want) // a list that names no apiVersion is in the version asked
		d = newItemDecoder(func(data []byte, index int) (T, error) { return decodeItem(data, seen, index) }, part)
		for _, raw := range later {
			if err != nil {
				break
			}
			err = d.addWith(func(buf []byte) ([]byte, error) { return append(buf, raw...), nil })
		}
	}
	if d != nil {
		if failed := d.finish(); failed != nil {
			return metav1.ListMeta{}, failed
		}
	}
	if err == nil {
		err = checkListType(head, want)
	}
	if err == nil && d == nil {
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
			err = ownFault{fmt.Errorf("%w: the LIST answer is not a CBOR list: %v", ErrUnexpectedObject, err)}
		}
		return metav1.ListMeta{}, err
	}
	return listMetaFrom(lm)
}

// eachItem reads the items array (or null), handing each item, which
// must be a map, to add.
func (s *cborScanner) eachItem(add func(read func([]byte) ([]byte, error)) error) error {
	next, err := s.r.Peek(1)
	if err != nil {
		return unexpectedEOF(err)
	}
	if next[0] == cborNull {
		_, _ = s.r.Discard(1)
		return nil
	}
	_, h, err := s.appendHead(nil)
	if err != nil {
		return err
	}
	if h.major != cborArray {
		return ownFault{fmt.Errorf("%w: the list's items are CBOR major type %d, not an array", ErrUnexpectedObject, h.major)}
	}
	for i := uint64(0); h.indefinite || i < h.arg; i++ {
		next, err := s.r.Peek(1)
		if err != nil {
			return unexpectedEOF(err)
		}
		if h.indefinite && next[0] == cborBreak {
			_, _ = s.r.Discard(1)
			return nil
		}
		if next[0]>>5 != cborMap {
			return ownFault{fmt.Errorf("%w: list item %d is not a CBOR map", ErrUnexpectedObject, i)}
		}
		if err := add(func(buf []byte) ([]byte, error) { return s.appendItem(buf, 0) }); err != nil {
			return err
		}
	}
	return nil
}

// listMetaFrom takes the fields the reflector uses from a list's metadata.
func listMetaFrom(m map[string]any) (metav1.ListMeta, error) {
	var lm metav1.ListMeta
	var ok bool
	if v, present := m["resourceVersion"]; present {
		if lm.ResourceVersion, ok = v.(string); !ok {
			return metav1.ListMeta{}, ownFault{fmt.Errorf("%w: the LIST answer's resourceVersion is %T, not a string", ErrUnexpectedObject, v)}
		}
	}
	if v, present := m["continue"]; present {
		if lm.Continue, ok = v.(string); !ok {
			return metav1.ListMeta{}, ownFault{fmt.Errorf("%w: the LIST answer's continue token is %T, not a string", ErrUnexpectedObject, v)}
		}
	}
	if v, present := m["remainingItemCount"]; present && v != nil {
		n, ok := v.(int64)
		if !ok {
			return metav1.ListMeta{}, ownFault{fmt.Errorf("%w: the LIST answer's remainingItemCount is %T, not an integer", ErrUnexpectedObject, v)}
		}
		lm.RemainingItemCount = &n
	}
	return lm, nil
}

// unstructuredCBORItem decodes an item into an Unstructured, as
// apimachinery's CBOR serializer decodes an UnstructuredList's items, and
// fills in a missing kind as unstructuredJSONItem does.
func unstructuredCBORItem(data []byte, head metav1.TypeMeta, index int) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := direct.Unmarshal(data, &m); err != nil {
		return nil, ownFault{fmt.Errorf("%w: list item %d: %v", ErrUnexpectedObject, index, err)}
	}
	jsonNumbers(m)
	return unstructuredItem(m, head, index)
}

// namesItsType reports whether a list item, a CBOR map, has both a
// "kind" and an "apiVersion" of its own.
func namesItsType(raw []byte) bool {
	s := &cborScanner{r: bufio.NewReader(bytes.NewReader(raw))}
	n := 0
	err := s.eachEntry(func(key string) error {
		if key == "kind" || key == "apiVersion" {
			n++
		}
		return s.skipValue()
	})
	return err == nil && n == 2
}
