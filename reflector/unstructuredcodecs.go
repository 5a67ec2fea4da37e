package reflector

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// unstructuredCodecs is the rest client's serializer for unstructured
// objects: any JSON object decodes to *unstructured.Unstructured, but a
// Status to a *metav1.Status (see unstructuredDecoding), and the watch
// stream's envelopes decode with envelopeScheme. client-go's dynamic
// client carries the same idea; this module may not import it. With cbor
// it reads CBOR too: objects with apimachinery's CBOR serializer, a watch
// as a CBOR sequence (application/cbor-seq, as kube-apiserver names its
// CBOR watch; client-go's rest maps that name to application/cbor only
// under its own ClientsAllowCBOR gate, off by default, so it is listed
// here under both names).
type unstructuredCodecs struct{ cbor bool }

func (c unstructuredCodecs) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       unstructuredDecoding{Serializer: unstructured.UnstructuredJSONScheme},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    json.NewSerializerWithOptions(json.DefaultMetaFactory, envelopeScheme, envelopeScheme, json.SerializerOptions{}),
			Framer:        json.Framer,
		},
	}}
	if !c.cbor {
		return infos
	}
	for _, mediaType := range []string{runtime.ContentTypeCBOR, runtime.ContentTypeCBORSequence} {
		infos = append(infos, runtime.SerializerInfo{
			MediaType:        mediaType,
			MediaTypeType:    "application",
			MediaTypeSubType: strings.TrimPrefix(mediaType, "application/"),
			Serializer:       unstructuredDecoding{Serializer: cbor.NewSerializer(envelopeScheme, envelopeScheme), cbor: true},
			StreamSerializer: &runtime.StreamSerializerInfo{
				// Transcode(false): each event's object stays CBOR, for
				// unstructuredDecoding to decode.
				Serializer: cbor.NewSerializer(envelopeScheme, envelopeScheme, cbor.Transcode(false)),
				Framer:     cborSeqFramer{},
			},
		})
	}
	return infos
}

// EncoderForVersion and DecoderToVersion convert nothing: unstructured
// objects are whatever version the server sent.
func (unstructuredCodecs) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (unstructuredCodecs) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// unstructuredDecoding decodes with a serializer (JSON's or CBOR's) into
// an *unstructured.Unstructured when asked to decode into nothing (a
// watch event's object, an error answer), and turns one of kind Status in
// v1 into a *metav1.Status. rest's Result.Error reads an error answer's
// reason and details (a 429's retryAfterSeconds, a "too large resource
// version" cause) only from a *metav1.Status; without this, an
// unstructured ListerWatcher's errors kept only their HTTP code
// (TestAnUnstructuredErrorAnswerIsReadAsItsStatusInJSONAndCBOR).
//
// With cbor, whole-number floats become int64, as JSON reads them
// (jsonNumbers).
type unstructuredDecoding struct {
	runtime.Serializer
	cbor bool
}

func (u unstructuredDecoding) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into != nil {
		return u.Serializer.Decode(data, gvk, into)
	}
	obj, actual, err := u.Serializer.Decode(data, gvk, &unstructured.Unstructured{})
	if err != nil {
		return obj, actual, err
	}
	if o, ok := obj.(*unstructured.Unstructured); ok && u.cbor {
		jsonNumbers(o.Object)
	}
	if o, ok := obj.(*unstructured.Unstructured); ok && o.GetKind() == "Status" && o.GetAPIVersion() == "v1" {
		status := &metav1.Status{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, status) == nil {
			return status, actual, nil
		}
	}
	return obj, actual, nil
}
