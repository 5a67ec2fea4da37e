package fakeapiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serveList answers GET on a collection: a LIST page, or a WATCH with
// watch=true.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, req request, f format) {
	opts, err := listOptions(r)
	if err != nil {
		writeError(w, f, err)
		return
	}
	filt, err := newFilter(req.namespace, opts)
	if err != nil {
		writeError(w, f, err)
		return
	}
	if opts.Watch {
		s.serveWatch(w, r, req.res, f, filt, opts)
		return
	}
	items, lm, err := s.list(req.res, filt, opts)
	if err != nil {
		writeError(w, f, err)
		return
	}
	s.writeList(w, f, req.res, items, lm)
}

func (s *Server) writeList(w http.ResponseWriter, f format, res Resource, items []*unstructured.Unstructured, lm metav1.ListMeta) {
	body, err := s.encodeList(f, res, items, lm)
	if err != nil {
		writeError(w, f, err)
		return
	}
	writeBody(w, http.StatusOK, f.contentType(), body)
}

func (s *Server) writeObject(w http.ResponseWriter, code int, f format, res Resource, obj *unstructured.Unstructured) {
	body, err := s.encodeObject(f, res, obj)
	if err != nil {
		writeError(w, f, err)
		return
	}
	writeBody(w, code, f.contentType(), body)
}

func (s *Server) serveGet(w http.ResponseWriter, _ *http.Request, req request, f format) {
	obj, err := s.get(req.res, objectKey{req.namespace, req.name})
	if err != nil {
		writeError(w, f, err)
		return
	}
	s.writeObject(w, http.StatusOK, f, req.res, obj)
}

// serveCreate answers POST: 201 with the stored object.
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, req request, f format) {
	u, err := s.readBody(r, req)
	if err != nil {
		writeError(w, f, err)
		return
	}
	obj, err := s.create(req.res, u)
	if err != nil {
		writeError(w, f, err)
		return
	}
	s.writeObject(w, http.StatusCreated, f, req.res, obj)
}

// serveUpdate answers PUT: 200 with the stored object, or 201 when it
// created one.
func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, req request, f format) {
	u, err := s.readBody(r, req)
	if err != nil {
		writeError(w, f, err)
		return
	}
	if u.GetName() != req.name {
		writeError(w, f, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", u.GetName(), req.name)))
		return
	}
	obj, created, err := s.update(req.res, u)
	if err != nil {
		writeError(w, f, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeObject(w, code, f, req.res, obj)
}

// serveDelete answers DELETE with a Status (Success), as kube-apiserver
// does for most resources served here, custom ones included; for a
// Pod, a Service or a Namespace, whose stores return the deleted object
// (ReturnDeletedObject), with that object, at the delete's
// resourceVersion (TestConformanceDeleteAnswersTheObjectWhereTheStoreReturnsIt).
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, req request, f format) {
	opts, err := s.decodeDeleteOptions(r)
	if err != nil {
		writeError(w, f, err)
		return
	}
	obj, err := s.delete(req.res, objectKey{req.namespace, req.name}, opts.Preconditions)
	if err != nil {
		writeError(w, f, err)
		return
	}
	if returnsDeletedObject(req.res) {
		s.writeObject(w, http.StatusOK, f, req.res, obj)
		return
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: req.name, Group: req.res.Group, Kind: req.res.Resource, UID: obj.GetUID()},
	}
	// A success Status goes in the negotiated type, the metadata-only
	// form's included: kube-apiserver's transformation passes it through.
	body, err := encodeStatusObject(f.protobuf, &st)
	if err != nil {
		writeError(w, f, err)
		return
	}
	writeBody(w, http.StatusOK, f.contentType(), body)
}

// returnsDeletedObject reports whether kube-apiserver's store of res
// answers a delete with the object rather than a Status: the core
// group's pods, services and namespaces, of those served here.
func returnsDeletedObject(res Resource) bool {
	return !res.Custom && res.Group == "" && (res.Resource == "pods" || res.Resource == "services" || res.Resource == "namespaces")
}

// readBody decodes a write's object and checks its namespace against the
// URL's, filling it in when the body has none.
func (s *Server) readBody(r *http.Request, req request) (*unstructured.Unstructured, error) {
	u, err := s.decodeObject(r, req.res)
	if err != nil {
		return nil, err
	}
	if !req.res.Namespaced {
		u.SetNamespace("")
		return u, nil
	}
	switch ns := u.GetNamespace(); {
	case ns == "":
		u.SetNamespace(req.namespace)
	case ns != req.namespace:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return u, nil
}
