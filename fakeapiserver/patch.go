package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// servePatch answers PATCH with a JSON merge patch (RFC 7386,
// application/merge-patch+json), the only patch type this library
// sends: 200 with the stored object. kube-apiserver applies the patch to
// the stored object and updates it, so:
//
//   - a missing object is 404, for Leases too (create-on-update is PUT's
//     alone);
//   - a cluster-scoped object's patched namespace is dropped, and a
//     namespaced object's removed one is the request's;
//   - a resourceVersion in the patch is a precondition, as a PUT's is: a
//     stale one answers 409 Conflict; none means "whatever is stored";
//   - null removes a field (a label, an annotation), and is dropped
//     inside a value set where there was none (mergePatch); a patch that
//     changes nothing writes nothing: 200, the same resourceVersion; a
//     patch that is null, or no object, is 400; one whose result does
//     not decode (a label value 1) is 422 Invalid;
//   - a patch of metadata.uid is 422 Invalid (immutable), judged after
//     the resourceVersion, where a PUT's uid is a precondition (409); a
//     patch that removes it keeps it (updateLocked);
//   - any other patch type (JSON patch, strategic merge, apply) answers
//     415 here: not modelled.
func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, req request, f format) {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != string(types.MergePatchType) {
		writeError(w, f, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", req.res.GroupResource(), "",
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", types.MergePatchType), 0, false))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, f, err)
		return
	}
	var patch map[string]any
	if err := json.Unmarshal(body, &patch); err != nil {
		writeError(w, f, apierrors.NewBadRequest(err.Error()))
		return
	}
	if patch == nil { // JSON null: no patch, to kube-apiserver's merge
		writeError(w, f, apierrors.NewBadRequest("Invalid JSON Patch"))
		return
	}
	obj, err := s.patch(req, patch)
	if err != nil {
		writeError(w, f, err)
		return
	}
	s.writeObject(w, http.StatusOK, f, req.res, obj)
}

// patch merges patch into the stored object and updates it, under one
// hold of the lock: no write comes between the read and the update.
func (s *Server) patch(req request, patch map[string]any) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(req.res); err != nil {
		return nil, err
	}
	key := objectKey{req.namespace, req.name}
	old := s.current[req.res.GroupResource()][key]
	if old == nil {
		return nil, apierrors.NewNotFound(req.res.GroupResource(), req.name)
	}
	// The patch applies to the object as the request's version serves
	// it (one stored before a MoveCRD at the version moved to), and may
	// not change its apiVersion or kind: that is the validation's 422
	// (validateTypeMeta, in updateLocked), not the 400 of a body in
	// another version.
	current := old.DeepCopy()
	current.SetAPIVersion(req.res.GroupVersion().String())
	current.SetKind(req.res.Kind)
	result := &unstructured.Unstructured{Object: mergePatch(current.Object, patch).(map[string]any)}
	kind, apiVersion := result.GetKind(), result.GetAPIVersion()
	if err := patchedTypeMeta(req.res, kind, apiVersion); err != nil {
		return nil, err
	}
	if !req.res.Custom {
		// A built-in that passed is its resource's kind and version: its
		// kind removed is defaulted, another version of its group converted.
		kind, apiVersion = req.res.Kind, req.res.GroupVersion().String()
	}
	result.SetKind(req.res.Kind) // decoded as the resource's, then judged as patched
	result.SetAPIVersion(req.res.GroupVersion().String())
	merged, err := json.Marshal(result.Object)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	u, err := s.decodeBody(merged, mediaJSON, req.res)
	if err != nil {
		// The patcher's answer to a result that does not decode (a label
		// value 1), 422, not the 400 of a POST's or a PUT's body
		// (TestConformanceMergePatchWhoseMetadataDoesNotDecode).
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), string(merged), err.Error())})
	}
	if !req.res.Namespaced || u.GetNamespace() == "" {
		// BeforeUpdate: the scope's namespace, the request's, for a
		// cluster-scoped object or one patched out of its own.
		u.SetNamespace(req.namespace)
	}
	if u.GetName() != req.name || (req.res.Namespaced && u.GetNamespace() != req.namespace) {
		return nil, apierrors.NewBadRequest("a patch may not change the object's name or namespace")
	}
	u.SetKind(kind)
	u.SetAPIVersion(apiVersion)
	obj, _, err := s.updateLocked(req.res, u)
	return obj, err
}

// patchedTypeMeta judges a patch's result that kube-apiserver cannot
// decode, which fails inside the patch, before its name check and its
// precondition: a built-in of another kind or apiVersion (422), or with
// no apiVersion (400); a custom resource with no kind (422)
// (TestConformancePatchOfABuiltInsKindBesideEarlierChecks,
// TestConformancePatchOutOfABuiltInsAPIVersion,
// TestConformancePatchOutOfACustomKindBesideEarlierChecks). A
// custom resource's other kind or apiVersion still decodes, and is its
// validation's, later (validateTypeMeta).
func patchedTypeMeta(res Resource, kind, apiVersion string) error {
	invalid := func(path, value string) error {
		return apierrors.NewInvalid(res.GVK().GroupKind(), "", field.ErrorList{field.Invalid(field.NewPath(path), value, "the patched object does not decode")})
	}
	switch want := res.GroupVersion().String(); {
	case res.Custom && kind == "":
		return invalid("kind", kind)
	case res.Custom:
		return nil
	case apiVersion == "":
		return apierrors.NewBadRequest("the patched object has no apiVersion")
	case apiVersion != want: // another version kube-apiserver would convert is not modelled
		return invalid("apiVersion", apiVersion)
	case kind != "" && kind != res.Kind:
		return invalid("kind", kind)
	}
	return nil
}

// mergePatch applies a JSON merge patch to doc as kube-apiserver's
// library (evanphx/json-patch) does, which is RFC 7386 but for nulls
// inside a value it sets: an object in the patch merges key by key
// into an object, null removes the key, anything else replaces the
// value; a value set where there was none, or null, or no object, has
// its nulls removed first, in its objects and its arrays' objects
// alike (an array's own null elements stay), while an array set over
// an object is kept whole, nulls and all
// (TestConformanceMergePatchDropsNullsInsideANewArray). It returns
// the result, which may reuse doc's maps and patch's values.
func mergePatch(doc any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		return pruneNulls(p)
	}
	for k, v := range p {
		switch cur, ok := d[k]; {
		case v == nil:
			delete(d, k)
		case !ok || cur == nil:
			d[k] = pruneNulls(v)
		default:
			if _, isObject := cur.(map[string]any); !isObject {
				d[k] = pruneNulls(v)
			} else {
				d[k] = mergePatch(cur, v) // an array or a scalar over an object: kept as sent
			}
		}
	}
	return d
}

// pruneNulls removes the null members of v's objects, nested in
// objects and arrays to any depth; an array's null elements stay. It
// changes v's maps in place and returns v.
func pruneNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range v {
			pruneNulls(e)
		}
	}
	return v
}
