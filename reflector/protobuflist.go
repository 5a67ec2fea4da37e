package reflector

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// A protobuf LIST answer is decoded here item by item, straight into the
// objects the cache will keep, instead of by the API machinery's decoder.
// That decoder builds the whole list first, a FooList whose Items array
// holds every object by value, and the items must then be copied out of
// it one by one (meta.ExtractListWithAlloc), or keeping one of them would
// keep the whole array alive: two allocations of every object, and one
// array the size of the whole list for the collector to scan. Split
// first, each item is decoded once, into its own allocation; and since
// the items are independent, they are decoded on every core at once.
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
// Every list type in k8s.io/api has metadata at 1 and items at 2.

// protobufPrefix starts every protobuf message the API server sends.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// errNotAProtobufList is wrapped into every error about the layout.
var errNotAProtobufList = errors.New("not a protobuf list")

// itemsPerWorker is the fewest items worth a goroutine of their own.
const itemsPerWorker = 256

// decodeProtobufList decodes body, a LIST answer in protobuf whose items
// are Ts, into its items and metadata. wantKind is the list's kind, such
// as "ConfigMapList".
func decodeProtobufList[T informer.Object](body []byte, wantKind string) ([]T, metav1.ListMeta, error) {
	raw, kind, err := unwrapUnknown(body)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	if kind != wantKind {
		return nil, metav1.ListMeta{}, fmt.Errorf("%w: the LIST answered kind %q, want %q", ErrUnexpectedObject, kind, wantKind)
	}
	var lm metav1.ListMeta
	var items [][]byte
	err = eachField(raw, func(num protowire.Number, value []byte) error {
		switch num {
		case 1:
			return lm.Unmarshal(value)
		case 2:
			items = append(items, value)
		}
		return nil
	})
	if err != nil {
		return nil, metav1.ListMeta{}, fmt.Errorf("%w: %s: %v", errNotAProtobufList, wantKind, err)
	}
	out, err := decodeItems[T](items)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	return out, metav1.ListMeta{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue, RemainingItemCount: lm.RemainingItemCount}, nil
}

// unwrapUnknown checks the prefix and returns the runtime.Unknown's raw
// bytes and the kind its typeMeta names.
func unwrapUnknown(body []byte) (raw []byte, kind string, err error) {
	rest, ok := bytes.CutPrefix(body, protobufPrefix)
	if !ok {
		return nil, "", fmt.Errorf("%w: the answer does not start with the protobuf prefix", errNotAProtobufList)
	}
	err = eachField(rest, func(num protowire.Number, value []byte) error {
		switch num {
		case 1:
			return eachField(value, func(num protowire.Number, value []byte) error {
				if num == 2 {
					kind = string(value)
				}
				return nil
			})
		case 2:
			raw = value
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", errNotAProtobufList, err)
	}
	return raw, kind, nil
}

// eachField calls fn with every length-delimited field of the message b,
// in order, and skips fields of other wire types.
func eachField(b []byte, fn func(num protowire.Number, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		value, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, value); err != nil {
			return err
		}
	}
	return nil
}

// decodeItems unmarshals each item into a new T, on up to GOMAXPROCS
// goroutines, each taking a contiguous run of items. An error names its
// item; of several, the first run's is returned.
func decodeItems[T informer.Object](items [][]byte) ([]T, error) {
	elem := reflect.TypeFor[T]().Elem()
	out := make([]T, len(items))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(items)/itemsPerWorker))
	per := (len(items) + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * per; i < min(len(items), (w+1)*per); i++ {
				obj := reflect.New(elem).Interface()
				if err := obj.(protobufMessage).Unmarshal(items[i]); err != nil {
					errs[w] = fmt.Errorf("%w: list item %d: %v", ErrUnexpectedObject, i, err)
					return
				}
				out[i] = obj.(T)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
