package reflector

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// A protobuf LIST answer is decoded here as it arrives, item by item,
// straight into the objects the cache will keep, instead of by the API
// machinery's decoder. That decoder needs the whole body in memory first
// (read with io.ReadAll, which grows its buffer by doubling: for a 100 MB
// list, some 200 MB allocated and cleared), then builds the whole FooList,
// whose Items array holds every object by value, from which the items
// must be copied one by one (meta.ExtractListWithAlloc), or keeping one
// would keep the whole array alive. Here the body is read in small
// batches of items, each batch decoded on a core of its own while the
// next is read, each item once, into its own allocation; a batch's
// buffer is reused once decoded. What the list costs in memory is then
// the objects themselves, not the objects plus the body plus the array.
//
// The layout, from the API machinery's protobuf serializer
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf):
//
//	"k8s\x00"                      4 bytes that say "Kubernetes protobuf"
//	runtime.Unknown {
//	    1: typeMeta  {1: apiVersion, 2: kind}
//	    2: raw       the list message: FooList {
//	                     1: metadata  ListMeta
//	                     2: items     Foo, repeated: one field per item
//	                 }
//	    3: contentEncoding, 4: contentType
//	}
//
// Every list type in k8s.io/api has metadata at 1 and items at 2, and the
// serializer writes fields in that order.

// protobufPrefix starts every protobuf message the API server sends.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// errNotAProtobufList is wrapped into every error about the layout.
var errNotAProtobufList = errors.New("not a protobuf list")

// batchBytes is how many bytes of items are read before they are handed
// to a decoder: large enough that handing over costs nothing, small
// enough that a 2-core machine has a batch to decode while the next is
// read, and that the buffers in flight weigh little.
const batchBytes = 256 << 10

// batchItems is how many items a batch holds at most, however small:
// decoded items wait for the cache beside the old objects they replace,
// and small objects (metadata only, in protobuf) would otherwise fill a
// batch by the thousand.
const batchItems = 256

// decodeProtobufList reads a LIST answer in protobuf whose items are Ts
// from r, decoding its items as they arrive and handing them to part, in
// list order, a batch at a time. want is the list's kind and apiVersion,
// such as ConfigMapList in v1. An error from part stops the reading and
// is returned as it is; a failure to read the answer is returned as
// such (see readFailure), not as a bad answer.
func decodeProtobufList[T informer.Object](r io.Reader, want metav1.TypeMeta, part func([]T) error) (metav1.ListMeta, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	prefix := make([]byte, len(protobufPrefix))
	if _, err := io.ReadFull(br, prefix); err != nil || !bytes.Equal(prefix, protobufPrefix) {
		return metav1.ListMeta{}, fmt.Errorf("%w: the answer does not start with the protobuf prefix", errNotAProtobufList)
	}
	d := newItemDecoder(decodeProtobufItem[T], part)
	var lm metav1.ListMeta
	var got metav1.TypeMeta
	err := eachField(br, -1, func(num protowire.Number, size int, field *bufio.Reader) error {
		switch num {
		case 1: // typeMeta: kind is its field 2
			typeMeta, err := readN(field, size)
			if err != nil {
				return err
			}
			return eachField(bufio.NewReader(bytes.NewReader(typeMeta)), size, func(num protowire.Number, size int, f *bufio.Reader) error {
				value, err := readN(f, size)
				switch num {
				case 1:
					got.APIVersion = string(value)
				case 2:
					got.Kind = string(value)
				}
				return err
			})
		case 2: // raw: the list
			if err := checkListType(got, want); err != nil {
				return err
			}
			return eachField(field, size, func(num protowire.Number, size int, f *bufio.Reader) error {
				if num == 2 {
					return d.add(f, size)
				}
				value, err := readN(f, size)
				if err == nil && num == 1 {
					err = lm.Unmarshal(value)
				}
				return err
			})
		}
		_, err := readN(field, size)
		return err
	})
	if failed := d.finish(); failed != nil {
		return metav1.ListMeta{}, failed // an item that did not decode, or part's own error
	}
	if err == nil && got.Kind == "" {
		err = fmt.Errorf("%w: the answer holds no list", errNotAProtobufList)
	}
	if failed := readFailure(err); failed != nil {
		return metav1.ListMeta{}, failed
	}
	if err != nil {
		if !errors.Is(err, ErrUnexpectedObject) {
			err = fmt.Errorf("%w: %s: %v", errNotAProtobufList, want.Kind, err)
		}
		return metav1.ListMeta{}, err
	}
	return metav1.ListMeta{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue, RemainingItemCount: lm.RemainingItemCount}, nil
}

// eachField reads the fields of a message of size bytes from r (size -1:
// until r ends) and calls fn with each length-delimited field, which must
// consume exactly size bytes of it. Every field, its tag and length
// included, ends within the message
// (TestAProtobufFieldThatRunsPastItsMessageIsAnError). Fields of other wire types are
// skipped, but not as fields 1 and 2, which every message read here (the
// runtime.Unknown envelope, its TypeMeta, the list) holds as bytes: an
// item sent as a number is an error, never a shorter list
// (TestAProtobufItemOfTheWrongWireTypeIsAnErrorNotAShorterList).
func eachField(r *bufio.Reader, size int, fn func(num protowire.Number, size int, r *bufio.Reader) error) error {
	read := 0
	for size < 0 || read < size {
		tag, n, err := readVarint(r)
		if err == io.EOF && size < 0 && n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		read += n
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber {
			return errors.New("a field numbered 0")
		}
		if num <= 2 && typ != protowire.BytesType {
			return fmt.Errorf("field %d has wire type %d, but it holds bytes", num, typ)
		}
		var length uint64
		switch typ {
		case protowire.BytesType:
			length, n, err = readVarint(r)
			read += n
		case protowire.VarintType: // the value is all of it: length stays 0
			_, n, err = readVarint(r)
			read += n
		case protowire.Fixed32Type:
			length = 4
		case protowire.Fixed64Type:
			length = 8
		default:
			return fmt.Errorf("field %d has wire type %d, which no list holds", num, typ)
		}
		if err != nil {
			return err
		}
		if size >= 0 && read > size {
			return fmt.Errorf("field %d runs past the end of its message", num)
		}
		if size >= 0 && length > uint64(size-read) || length > 1<<31 {
			return fmt.Errorf("field %d claims %d bytes, more than its message holds", num, length)
		}
		read += int(length)
		if typ != protowire.BytesType {
			if _, err := r.Discard(int(length)); err != nil {
				return err
			}
			continue
		}
		if err := fn(num, int(length), r); err != nil {
			return err
		}
	}
	return nil
}

// readVarint reads one varint, and says how many bytes it took.
func readVarint(r *bufio.Reader) (v uint64, n int, err error) {
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && n > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, n, err
		}
		n++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, n, nil
		}
	}
	return 0, n, errors.New("a varint longer than 10 bytes")
}

// readN reads exactly n bytes.
func readN(r *bufio.Reader, n int) ([]byte, error) {
	return appendN(nil, r, n)
}

// appendN appends exactly n bytes read from r to buf, growing buf as
// they come, not by what a length prefix claims: a short answer that
// claims gigabytes allocates about what it holds
// (TestAProtobufLengthPrefixClaimingGigabytesAllocatesNoGigabytes).
func appendN(buf []byte, r io.Reader, n int) ([]byte, error) {
	// A claim up to 16 MiB, ten times the largest object etcd stores, is
	// allocated at once, as it always was; a larger one grows by as much
	// as has come (TestALargeItemIsReadWithoutRegrowingItsBuffer).
	const trusted = 16 << 20
	first := len(buf)
	for n > 0 {
		k, start := min(n, max(trusted, len(buf)-first)), len(buf)
		buf = slices.Grow(buf, k)[:start+k]
		got, err := io.ReadFull(r, buf[start:])
		buf, n = buf[:start+got], n-got
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}

// decodeProtobufItem unmarshals one protobuf item into a new T.
func decodeProtobufItem[T informer.Object](data []byte, index int) (T, error) {
	obj := newObject[T]()
	if err := any(obj).(protobufMessage).Unmarshal(data); err != nil {
		var zero T
		return zero, ownFault{fmt.Errorf("%w: list item %d: %v", ErrUnexpectedObject, index, err)}
	}
	return obj, nil
}

// newObject returns a new, empty T: T is a pointer to a struct.
func newObject[T informer.Object]() T {
	return reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
}
