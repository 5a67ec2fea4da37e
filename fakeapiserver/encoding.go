package fakeapiserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// Media types, as kube-apiserver names them.
const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// format is how one response is encoded, chosen from the request's
// Accept header by negotiate.
type format struct {
	protobuf bool // protobuf, else JSON
	// as is the metadata-only form asked for (as=PartialObjectMetadata or
	// as=PartialObjectMetadataList, group meta.k8s.io, version v1),
	// kube-apiserver's server-side transformation for metadata clients;
	// "" for the objects themselves.
	as string
	// statusProtobuf says an error's Status goes in protobuf. A Status
	// has no metadata-only form, so it goes in the first plain media type
	// of the Accept header that the server speaks, JSON if none.
	statusProtobuf bool
}

// The metadata-only forms: one for a list, one for an object (a get, or
// each event of a watch).
const (
	partialObject = "PartialObjectMetadata"
	partialList   = "PartialObjectMetadataList"
)

// negotiate picks the first media type in the Accept header that the
// server can answer with for res: protobuf only for a built-in resource,
// as kube-apiserver serves custom resources as JSON alone, but the
// metadata-only form in protobuf for every resource, since it is a
// built-in type whatever it was made from. No Accept, or */*, is JSON.
// Nothing acceptable answers 406.
func negotiate(r *http.Request, res Resource) (format, error) {
	status, _ := pick(r.Header.Get("Accept"), Resource{}, false)
	if f, ok := pick(r.Header.Get("Accept"), res, true); ok {
		f.statusProtobuf = status.protobuf
		return f, nil
	}
	return format{protobuf: status.protobuf, statusProtobuf: status.protobuf}, notAcceptable(res)
}

// notAcceptable is kube-apiserver's 406 for res.
func notAcceptable(res Resource) error {
	return apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", res.GroupResource(), "",
		fmt.Sprintf("only the following media types are accepted: %s", acceptable(res)), 0, false)
}

// pick is negotiate's choice, and false when nothing is acceptable.
// partial says whether the metadata-only forms may be chosen. A
// metadata-only form is chosen whether or not it fits the request (the
// list's form for a list): kube-apiserver finds out only when it
// encodes the answer, and so does encodeList or encodeObject.
func pick(accept string, res Resource, partial bool) (format, bool) {
	if strings.TrimSpace(accept) == "" {
		return format{}, true
	}
	for _, clause := range strings.Split(accept, ",") {
		typ, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		switch {
		case params["as"] != "":
			if partial && (typ == mediaJSON || typ == mediaProtobuf) && params["g"] == "meta.k8s.io" && params["v"] == "v1" &&
				(params["as"] == partialObject || params["as"] == partialList) {
				return format{protobuf: typ == mediaProtobuf, as: params["as"]}, true
			}
		case typ == mediaProtobuf && !res.Custom:
			return format{protobuf: true}, true
		case typ == mediaJSON, typ == "*/*", typ == "application/*":
			return format{}, true
		}
	}
	return format{}, false
}

func acceptable(res Resource) string {
	if res.Custom {
		return mediaJSON
	}
	return mediaJSON + ", " + mediaProtobuf
}

// contentType is the Content-Type of a response in f.
func (f format) contentType() string {
	if f.protobuf {
		return mediaProtobuf
	}
	return mediaJSON // also for the metadata-only form in JSON, as kube-apiserver says it
}

// encodeObject encodes one stored object as res's version serves it.
// Asked for a list's metadata-only form, it fails: kube-apiserver then
// ends a watch with no event, and answers a get with 406, or with 500
// for a custom resource (its objects, unstructured, pass the
// transformation's "not a list" check and fail after it).
//
// A stored object's encoding is made once per form and kept (see
// encodings): the bytes returned may be shared, and are only read.
func (s *Server) encodeObject(f format, res Resource, u *unstructured.Unstructured) ([]byte, error) {
	k := encodingKey{f: format{protobuf: f.protobuf, as: f.as}, gvk: res.GVK()} // an error's form is no part of an object's
	if b, ok := s.encoded.get(u, k); ok {
		return b, nil
	}
	b, err := s.encodeServed(f, res, u)
	if err == nil {
		s.encoded.put(u, k, b)
	}
	return b, err
}

// encodeServed is encodeObject's work, with no cache.
func (s *Server) encodeServed(f format, res Resource, u *unstructured.Unstructured) ([]byte, error) {
	u = served(res, u)
	switch f.as {
	case partialList:
		if res.Custom {
			return nil, apierrors.NewInternalError(fmt.Errorf("%s %q cannot be read as a %s", res.Kind, u.GetName(), partialList))
		}
		return nil, notAcceptable(res)
	case partialObject:
		p, err := partialOf(u)
		if err != nil {
			return nil, err
		}
		return encodePartial(f, p)
	}
	if f.protobuf {
		typed, err := s.typed(u)
		if err != nil {
			return nil, err
		}
		return encodeProtobuf(typed)
	}
	return json.Marshal(u.Object)
}

// served is u as res's version serves it: u's fields, with res's
// apiVersion and kind. It copies only u's top-level map, the one it
// changes, and shares everything below with u: the encoders only read
// it, and the server never changes an object it stored or handed out
// (commitLocked takes a copy). Cost: O(u's top-level fields), where a
// deep copy is O(all of u).
func served(res Resource, u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	out.SetAPIVersion(res.GroupVersion().String())
	out.SetKind(res.Kind)
	return out
}

// encodeList encodes a LIST answer: items (stored objects) and meta.
// Asked for an object's metadata-only form, it fails with 406, as
// kube-apiserver does.
func (s *Server) encodeList(f format, res Resource, items []*unstructured.Unstructured, lm metav1.ListMeta) ([]byte, error) {
	switch {
	case f.as == partialObject:
		return nil, notAcceptable(res)
	case f.as == partialList:
		list := &metav1.PartialObjectMetadataList{ListMeta: lm}
		list.APIVersion, list.Kind = "meta.k8s.io/v1", partialList
		for _, u := range items {
			p, err := partialOf(u)
			if err != nil {
				return nil, err
			}
			list.Items = append(list.Items, *p)
		}
		return encodePartial(f, list)
	case f.protobuf:
		return s.encodeProtobufList(res, items, lm)
	}
	return s.encodeJSONList(res, items, lm)
}

// encodeJSONList is a LIST answer in JSON: what json.Marshal makes of a
// map of apiVersion, items, kind and metadata (keys in that order, as
// it sorts them), written out by hand so that each item is its stored
// object's encoding (encodeObject), made once and kept, not encoded
// again for every list that shows it (a sharder's poll lists every
// member's Lease each RetryPeriod).
func (s *Server) encodeJSONList(res Resource, items []*unstructured.Unstructured, lm metav1.ListMeta) ([]byte, error) {
	apiVersion, err := json.Marshal(res.GroupVersion().String())
	if err != nil {
		return nil, err
	}
	kind, err := json.Marshal(res.ListKind)
	if err != nil {
		return nil, err
	}
	listMeta, err := json.Marshal(listMetaJSON(lm))
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"apiVersion":`), apiVersion...)
	b = append(b, `,"items":[`...)
	for i, u := range items {
		item, err := s.encodeObject(format{}, res, u)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	b = append(b, `],"kind":`...)
	b = append(b, kind...)
	b = append(b, `,"metadata":`...)
	b = append(b, listMeta...)
	return append(b, '}'), nil
}

func listMetaJSON(meta metav1.ListMeta) map[string]any {
	m := map[string]any{"resourceVersion": meta.ResourceVersion}
	if meta.Continue != "" {
		m["continue"] = meta.Continue
	}
	if meta.RemainingItemCount != nil {
		m["remainingItemCount"] = *meta.RemainingItemCount
	}
	return m
}

// typed converts a stored object to its Go type, for protobuf.
func (s *Server) typed(u *unstructured.Unstructured) (runtime.Object, error) {
	obj, err := s.scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	return obj, nil
}

// partialOf is u's metadata as a PartialObjectMetadata.
func partialOf(u *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	p := &metav1.PartialObjectMetadata{}
	p.APIVersion, p.Kind = "meta.k8s.io/v1", partialObject
	meta, _ := u.Object["metadata"].(map[string]any)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(meta, &p.ObjectMeta); err != nil {
		return nil, err
	}
	return p, nil
}

// encodePartial encodes a metadata-only object or list in f.
func encodePartial(f format, obj runtime.Object) ([]byte, error) {
	if f.protobuf {
		return encodeProtobuf(obj)
	}
	return json.Marshal(obj)
}

// protobufEncoder writes kube-apiserver's protobuf envelope: the magic
// "k8s\x00", then a runtime.Unknown holding the object's apiVersion, kind
// and protobuf bytes.
var protobufEncoder = protobuf.NewSerializer(nil, nil)

func encodeProtobuf(obj runtime.Object) ([]byte, error) {
	var b bytes.Buffer
	if err := protobufEncoder.Encode(obj, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeEvent encodes one watch event as a frame of the watch stream: in
// JSON, {"type":...,"object":...} and a newline; in protobuf, a
// metav1.WatchEvent (no envelope) after its length, 4 bytes big-endian.
// object is already encoded in f.
func encodeEvent(f format, typ string, object []byte) ([]byte, error) {
	if !f.protobuf {
		// What json.Marshal makes of a WatchEvent, without its second
		// pass over object: typ is an event type (no character to
		// escape) and object came from json.Marshal, so it is already
		// valid, compact and HTML-escaped.
		b := make([]byte, 0, len(`{"type":"","object":}`)+len(typ)+len(object)+1)
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, `","object":`...)
		b = append(b, object...)
		return append(b, "}\n"...), nil
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: object}}
	b, err := ev.Marshal()
	if err != nil {
		return nil, err
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	return append(frame, b...), nil
}

// encodeStatus encodes an error's Status in protobuf or JSON.
func encodeStatus(protobuf bool, err error) (int, []byte) {
	st := apiStatus(err)
	b, _ := encodeStatusObject(protobuf, &st)
	return int(st.Code), b
}

func encodeStatusObject(protobuf bool, st *metav1.Status) ([]byte, error) {
	st.APIVersion, st.Kind = "v1", "Status"
	if protobuf {
		return encodeProtobuf(st)
	}
	return json.Marshal(st)
}

// apiStatus is err as a Status: an API error's own, anything else a 500.
func apiStatus(err error) metav1.Status {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status()
	}
	return apierrors.NewInternalError(err).Status()
}

// writeError answers with err's Status.
func writeError(w http.ResponseWriter, f format, err error) {
	if errors.Is(err, errNoLongerServed) {
		notFound(w) // as for any path that serves nothing
		return
	}
	code, body := encodeStatus(f.statusProtobuf, err)
	w.Header().Set("Content-Type", f.statusContentType())
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func (f format) statusContentType() string {
	if f.statusProtobuf {
		return mediaProtobuf
	}
	return mediaJSON
}

// writeBody answers with an encoded object or list.
func writeBody(w http.ResponseWriter, code int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
