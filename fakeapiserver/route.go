package fakeapiserver

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// request is a resource request taken apart: which resource, which
// namespace ("" for all, or cluster-scoped), which object ("" for the
// collection).
type request struct {
	res             Resource
	namespace, name string
	// subresource: the path goes on past the name, at a custom
	// resource (a built-in's subresource path resolves to nothing).
	subresource bool
}

// route dispatches by path, as kube-apiserver's mux does:
//
//	/api, /apis, /api/v1, /apis/<group>/<version>, /version  discovery
//	/api/v1/<resource>[/<name>]                               cluster-scoped, or all namespaces (LIST, WATCH)
//	/api/v1/namespaces/<ns>/<resource>[/<name>]               namespaced
//	/apis/<group>/<version>/...                               the same for a named group
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var gv schema.GroupVersion
	var rest []string
	switch {
	case len(parts) == 1 && parts[0] == "version":
		s.serveVersion(w)
		return
	case parts[0] == "api" && len(parts) == 1:
		s.serveCoreVersions(w)
		return
	case parts[0] == "apis" && len(parts) == 1:
		s.serveGroups(w)
		return
	case parts[0] == "api":
		gv, rest = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case parts[0] == "apis" && len(parts) >= 3:
		gv, rest = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	case parts[0] == "apis" && len(parts) == 2:
		s.serveGroup(w, parts[1])
		return
	default:
		notFound(w)
		return
	}
	if len(rest) == 0 {
		s.serveResources(w, gv)
		return
	}
	req, ok := s.resolve(gv, rest)
	if !ok {
		notFound(w)
		return
	}
	if req.res.Custom && req.res.Namespaced && req.namespace == "" && r.Method != http.MethodGet {
		// apiextensions-apiserver serves a namespaced custom resource's
		// all-namespaces path for LIST and WATCH alone and hands any
		// other verb on: a plain 404, not a built-in's 405
		// (TestConformanceWriteAtACustomResourcesAllNamespacesPath).
		notFound(w)
		return
	}
	f, err := negotiate(r, req.res)
	if req.subresource {
		// apiextensions-apiserver answers any subresource of a CRD that
		// declares none, for every verb, with a NotFound naming the
		// object (TestConformanceASubresourceOfACustomResourceWithoutOne).
		writeError(w, f, apierrors.NewNotFound(req.res.GroupResource(), req.name))
		return
	}
	serve := s.handler(r.Method, req)
	if serve == nil {
		// go-restful finds no route for the method before it looks at
		// the Accept header: 405 before 406
		// (TestConformanceCreateAtTheAllNamespacesPathWithAnUnservedAccept).
		writeError(w, f, apierrors.NewMethodNotSupported(req.res.GroupResource(), r.Method))
		return
	}
	if err != nil {
		writeError(w, f, err)
		return
	}
	serve(w, r, req, f)
}

// handler is the handler of method at req's path, or nil where
// kube-apiserver routes none (405 MethodNotAllowed).
func (s *Server) handler(method string, req request) func(http.ResponseWriter, *http.Request, request, format) {
	if req.res.Custom {
		// apiextensions-apiserver routes by verb, whatever the path's
		// shape: a POST creates the body's object, the path's name
		// unread; a PUT or PATCH without a name is refused by its
		// handler (TestConformanceCustomResourceVerbsAtTheOtherPath).
		switch {
		case method == http.MethodPost:
			return s.serveCreate
		case method == http.MethodPut && req.name == "":
			return serveNameRequired
		case method == http.MethodPatch && req.name == "":
			return serveCollectionPatch
		}
	}
	switch {
	case method == http.MethodGet && req.name == "":
		return s.serveList
	case method == http.MethodGet:
		return s.serveGet
	case method == http.MethodPost && req.name == "" && (req.namespace != "" || !req.res.Namespaced):
		// A namespaced resource's all-namespaces path serves only LIST
		// and WATCH.
		return s.serveCreate
	case method == http.MethodPut && req.name != "":
		return s.serveUpdate
	case method == http.MethodPatch && req.name != "":
		return s.servePatch
	case method == http.MethodDelete && req.name != "":
		return s.serveDelete
	}
	return nil
}

// serveNameRequired is kube-apiserver's update and patch handlers'
// answer to a request whose path names no object.
func serveNameRequired(w http.ResponseWriter, _ *http.Request, _ request, f format) {
	writeError(w, f, apierrors.NewBadRequest("name must be provided"))
}

// customPatchTypes are the patch types apiextensions-apiserver takes
// for a custom resource (apply as CBOR is behind an alpha feature, off).
var customPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}

// serveCollectionPatch is a custom resource's patch handler's answer
// to a PATCH of its collection: the patch's media type is checked
// first, 415 for one it does not take, then the name, 400
// (TestConformancePatchOfACustomResourceCollectionChecksTheTypeFirst).
func serveCollectionPatch(w http.ResponseWriter, r *http.Request, req request, f format) {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if !slices.Contains(customPatchTypes, mediaType) {
		writeError(w, f, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", req.res.GroupResource(), "",
			fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(customPatchTypes, ", ")), 0, false))
		return
	}
	serveNameRequired(w, r, req, f)
}

// resolve finds the resource a path names, in a group version that
// serves it now.
func (s *Server) resolve(gv schema.GroupVersion, rest []string) (request, bool) {
	var req request
	if len(rest) >= 3 && rest[0] == "namespaces" {
		req.namespace, rest = rest[1], rest[2:]
	}
	s.mu.Lock()
	res, ok := s.resources[schema.GroupResource{Group: gv.Group, Resource: rest[0]}]
	s.mu.Unlock()
	if !ok || res.Version != gv.Version || (req.namespace != "" && !res.Namespaced) {
		return req, false
	}
	if len(rest) > 2 && !res.Custom {
		return req, false // subresources are not served
	}
	req.res = res
	if len(rest) >= 2 {
		req.name = rest[1]
	}
	req.subresource = len(rest) > 2
	if req.name != "" && res.Namespaced && req.namespace == "" {
		return req, false // a namespaced object needs its namespace
	}
	return req, true
}

// notFound is kube-apiserver's answer for a path nothing serves (a
// resource not installed, or removed): net/http's plain-text 404, not a
// Status. client-go reads it as NotFound all the same.
func notFound(w http.ResponseWriter) {
	http.NotFound(w, nil)
}

// listOptions reads a LIST or WATCH's query and validates it as
// kube-apiserver does.
func listOptions(r *http.Request) (metav1.ListOptions, error) {
	var internal metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &internal); err != nil {
		return metav1.ListOptions{}, apierrors.NewBadRequest(err.Error())
	}
	var opts metav1.ListOptions
	if err := metainternalversion.Convert_internalversion_ListOptions_To_v1_ListOptions(&internal, &opts, nil); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	if errs := metainternalversionvalidation.ValidateListOptions(&internal, true); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return opts, nil
}
