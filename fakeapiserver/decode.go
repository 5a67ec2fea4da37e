package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// decodeObject reads a request's body as an object of res. A built-in
// resource's body (JSON or protobuf, by Content-Type) is decoded into its
// Go type and back, so fields the type does not know are dropped, as
// kube-apiserver drops them; a custom resource's is JSON, kept whole
// but its metadata, which is decoded as ObjectMeta
// (decodeCustomMetadata).
func (s *Server) decodeObject(r *http.Request, res Resource) (*unstructured.Unstructured, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	u, err := s.decodeBody(body, mediaType, res)
	if err != nil {
		return nil, err
	}
	if want := res.GroupVersion().String(); res.Custom && u.GetAPIVersion() != want {
		// The handler's check, before anything else (a patch's result is
		// judged by validation instead: validateTypeMeta).
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", u.GetAPIVersion(), want))
	}
	return u, nil
}

// decodeBody is decodeObject's work on a body already read, in
// mediaType: JSON, or protobuf for a built-in resource.
func (s *Server) decodeBody(body []byte, mediaType string, res Resource) (*unstructured.Unstructured, error) {
	if res.Custom {
		if mediaType == mediaProtobuf {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "create", res.GroupResource(), "", "the body of the request was in an unknown format - accepted media types include: application/json", 0, false)
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, nil)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %T, not an object", obj))
		}
		return u, decodeCustomMetadata(u)
	}
	gvk := res.GVK()
	obj, ok := s.decodeTypedJSON(body, mediaType, gvk)
	if !ok {
		var got *schema.GroupVersionKind
		var err error
		obj, got, err = s.codecs.UniversalDeserializer().Decode(body, &gvk, nil)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if *got != gvk {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, not a %s", got, gvk))
		}
	}
	if secret, ok := obj.(*corev1.Secret); ok {
		defaultSecret(secret)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// decodeCustomMetadata reads a custom resource's metadata as
// ObjectMeta and writes it back, as apiextensions-apiserver's decoder
// does: a field of the wrong type (a label value that is a number, a
// name that is one) is 400 BadRequest; a null label or annotation value
// is ""; unknown fields, and empty ones (labels, annotations,
// finalizers, owner references), are dropped.
func decodeCustomMetadata(u *unstructured.Unstructured) error {
	m, ok := u.Object["metadata"]
	if !ok {
		return nil
	}
	body, err := json.Marshal(m)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	var om metav1.ObjectMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &om); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if u.Object["metadata"], err = runtime.DefaultUnstructuredConverter.ToUnstructured(&om); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// validateTypeMeta refuses a custom resource of another kind, or (the
// result of a patch, of any resource) of another kind or apiVersion,
// with 422 Invalid, as kube-apiserver does: after the namespace is
// found, a precondition met and a patch's name checked
// (TestConformanceStaleAndAnotherKind,
// TestConformanceAnotherKindIntoAMissingNamespace,
// TestConformancePatchOfABuiltInsTypeMeta). A create's or
// update's body in another apiVersion (or a built-in's of another kind)
// was refused before, with 400, by decodeObject.
func validateTypeMeta(res Resource, u *unstructured.Unstructured) error {
	if res.Custom && u.GetAPIVersion() == "" {
		// kube-apiserver's answer to a custom resource patched out of its
		// apiVersion, once the name check and the precondition passed
		// (TestConformancePatchOutOfACustomAPIVersionBesideEarlierChecks).
		return apierrors.NewInternalError(errors.New("Object 'apiVersion' is missing"))
	}
	if want := res.GroupVersion().String(); u.GetAPIVersion() != want {
		return apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: u.GetKind()}, u.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+want)})
	}
	if u.GetKind() != res.Kind {
		return apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: u.GetKind()}, u.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+res.Kind)})
	}
	return nil
}

// decodeTypedJSON is decodeBody's common case, a JSON object of res's
// own kind (or one that names none), decoded straight into gvk's Go type
// with the unmarshal the universal deserializer's JSON serializer uses
// (case-sensitive, ints kept, unknown fields dropped). It skips that
// serializer's first pass over the body, which only finds the kind.
// Anything else (not JSON, not an object, another kind, a decode
// error) reports false, and decodeBody takes the deserializer's path,
// which answers it as before. Cost: one pass over the body.
func (s *Server) decodeTypedJSON(body []byte, mediaType string, gvk schema.GroupVersionKind) (runtime.Object, bool) {
	if mediaType == mediaProtobuf || !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) {
		return nil, false
	}
	obj, err := s.scheme.New(gvk)
	if err != nil {
		return nil, false
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(body, obj); err != nil {
		return nil, false
	}
	tm, err := meta.TypeAccessor(obj)
	if err != nil || (tm.GetKind() != "" && tm.GetKind() != gvk.Kind) || (tm.GetAPIVersion() != "" && tm.GetAPIVersion() != gvk.GroupVersion().String()) {
		return nil, false
	}
	return obj, true
}

// decodeDeleteOptions reads a DELETE's body, if any, as DeleteOptions.
func (s *Server) decodeDeleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	opts := &metav1.DeleteOptions{}
	if len(body) == 0 {
		return opts, nil
	}
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType != mediaProtobuf {
		if err := json.Unmarshal(body, opts); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return opts, nil
	}
	gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	if _, _, err := s.codecs.UniversalDeserializer().Decode(body, &gvk, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

// defaultSecret does to a Secret what kube-apiserver does on every
// write: its type defaults to Opaque; and, in the conversion of its v1
// type, stringData is write-only, each of its keys is copied into data
// (over a key data already has) and the field itself is never stored or
// returned.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}
