package fakeapiserver

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// encodeProtobufList is a LIST answer in protobuf, written out by hand
// as encodeJSONList writes JSON, so that each item is its stored
// object's message, taken from the object's kept encoding
// (encodeObject), not converted to its Go type and encoded again for
// every list that shows it: a sharder's poll lists every member's Lease
// each RetryPeriod. The bytes are what the API machinery's protobuf
// serializer makes of the typed list (TestAProtobufListIsTheTypedListsEncoding):
//
//	"k8s\x00"
//	runtime.Unknown {
//	    1: typeMeta  {1: apiVersion, 2: kind}   the list's
//	    2: raw       FooList {
//	                     1: metadata  ListMeta
//	                     2: items     Foo, repeated: one field per item
//	                 }
//	    3: contentEncoding, 4: contentType      empty
//	}
//
// Every list type in k8s.io/api has metadata at 1 and items at 2, and an
// item's message is the one inside the object's own envelope (field 2 of
// its runtime.Unknown): the typed path clears an item's TypeMeta, which
// the protobuf message does not hold anyway. Cost: one copy of each
// item's kept bytes.
func (s *Server) encodeProtobufList(res Resource, items []*unstructured.Unstructured, lm metav1.ListMeta) ([]byte, error) {
	listMeta, err := lm.Marshal()
	if err != nil {
		return nil, err
	}
	raw := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), listMeta)
	for _, u := range items {
		envelope, err := s.encodeObject(format{protobuf: true}, res, u)
		if err != nil {
			return nil, err
		}
		message, err := protobufMessage(envelope)
		if err != nil {
			return nil, err
		}
		raw = protowire.AppendBytes(protowire.AppendTag(raw, 2, protowire.BytesType), message)
	}
	unknown := runtime.Unknown{
		TypeMeta: runtime.TypeMeta{APIVersion: res.GroupVersion().String(), Kind: res.ListKind},
		Raw:      raw,
	}
	body, err := unknown.Marshal()
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(protobufMagic), body...), nil
}

// protobufMagic starts every protobuf body the API server sends.
var protobufMagic = []byte("k8s\x00")

// protobufMessage returns the object's own message in envelope, an
// encodeProtobuf answer: field 2 (raw) of the runtime.Unknown after the
// magic. The bytes are envelope's, not a copy.
func protobufMessage(envelope []byte) ([]byte, error) {
	b, ok := bytes.CutPrefix(envelope, protobufMagic)
	if !ok {
		return nil, fmt.Errorf("fakeapiserver: not a protobuf envelope")
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 2 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			return v, nil
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil, fmt.Errorf("fakeapiserver: a protobuf envelope with no message")
}
