package fakeapiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/informer/internal/jsonvalue"
)

// optimisticLock is kube-apiserver's message for a write whose
// resourceVersion is no longer the stored one.
const optimisticLock = "the object has been modified; please apply your changes to the latest version and try again"

// The writes and get return the object as stored, not a copy: the
// handler only encodes it, and stored objects are never modified in
// place (see Server.current), so reading one outside s.mu is safe.

// create stores u (the server's from now on) as a new object of res.
func (s *Server) create(res Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return nil, err
	}
	return s.createLocked(res, u)
}

// createLocked is POST: a namespace that exists; a valid generateName
// if any, a name (or one generated from it) valid for res (nameErrors),
// a generation not negative and valid labels (labelErrorsLocked), every
// fault of these in one 422; no resourceVersion (etcd's store answers
// 500 to a create that carries a number other than 0); a key not taken
// (409 AlreadyExists). A repeated owner reference is dropped
// (dedupOwnerReferences); then come the system fields (uid,
// creationTimestamp; deletion's and selfLink wiped; a custom resource's
// and a Pod's generation is 1, another built-in's as sent) and the next
// resourceVersion. s.mu must be held.
func (s *Server) createLocked(res Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gr := res.GroupResource()
	dedupOwnerReferences(u)
	// Admission finds the namespace; then the name is generated, and the
	// object validated, its type meta first and alone; only then does
	// the storage refuse a resourceVersion
	// (TestConformanceCreateOfAnotherKindBesideOtherFaults,
	// TestConformanceCreateWithAResourceVersionIntoAMissingNamespace,
	// TestConformanceCreateOfAnotherKindWithGenerateName,
	// TestConformanceCreateWithAResourceVersionAndAValidationFault).
	if res.Namespaced {
		if _, ok := s.current[namespaces][objectKey{name: u.GetNamespace()}]; !ok {
			return nil, apierrors.NewNotFound(namespaces, u.GetNamespace())
		}
	}
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(s.generateNameLocked(gr, u))
	}
	if res.Custom || isPods(res) {
		// apiextensions-apiserver's and a Pod's PrepareForCreate, before
		// validation; another built-in's is kept as sent
		// (TestConformanceCreateWithAGeneration,
		// TestConformanceAPodsGenerationFollowsItsSpec).
		u.SetGeneration(1)
	}
	if err := validateTypeMeta(res, u); err != nil {
		return nil, err
	}
	// After the type meta (TestConformanceCreateOfAnotherKindWithNoName).
	// Every cause, in ValidateObjectMeta's order, in one 422.
	errs := generateNameErrors(res, u)
	errs = append(errs, nameErrors(res, u.GetName())...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(u.GetGeneration(), field.NewPath("metadata", "generation"))...)
	if errs = append(errs, s.labelErrorsLocked(u)...); len(errs) > 0 {
		return nil, apierrors.NewInvalid(res.GVK().GroupKind(), u.GetName(), errs)
	}
	if rv, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64); err == nil && rv != 0 {
		// etcd's store ignores a resourceVersion it cannot parse, and 0.
		return nil, storageError("resourceVersion should not be set on objects to be created")
	}
	key := objectKey{u.GetNamespace(), u.GetName()}
	if _, ok := s.current[gr][key]; ok {
		return nil, apierrors.NewAlreadyExists(gr, u.GetName())
	}
	s.uids++
	u.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", s.uids)))
	u.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	u.SetDeletionTimestamp(nil)
	u.SetDeletionGracePeriodSeconds(nil)
	u.SetManagedFields(nil)
	u.SetSelfLink("") // etcd's store clears it on every write (TestConformanceSelfLinkIsNotStored)
	return s.commitLocked(gr, added, u), nil
}

// isPods reports whether res is the core group's pods, whose strategy
// keeps metadata.generation: 1 on a create, one more on each update
// that changes the spec.
func isPods(res Resource) bool { return !res.Custom && res.Group == "" && res.Resource == "pods" }

// keepsStatus reports whether res's strategy keeps the stored status on
// an update of the main resource: the core group's pods, services and
// namespaces, of those served here.
func keepsStatus(res Resource) bool {
	return !res.Custom && res.Group == "" && (res.Resource == "pods" || res.Resource == "services" || res.Resource == "namespaces")
}

// keepField sets u's field at path to a copy of old's, or removes it
// where old has none.
func keepField(u, old *unstructured.Unstructured, path ...string) {
	v, found, err := unstructured.NestedFieldCopy(old.Object, path...)
	if found && err == nil {
		_ = unstructured.SetNestedField(u.Object, v, path...)
		return
	}
	unstructured.RemoveNestedField(u.Object, path...)
}

// storageError is the storage's plain error, not a Status from the
// registry: the handler answers it as 500 with no reason.
func storageError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}

// update is PUT, as kube-apiserver's generic registry does it:
//
//   - a uid in the body is a precondition, judged first: it must be the
//     stored object's, and a missing object has none (409 Conflict);
//   - a missing object answers 404, whatever the body's resourceVersion,
//     or, for a resource that allows create-on-update (Leases), is
//     created whatever number that is (201); one that is no number is
//     500 first, once the namespace is found;
//   - a resourceVersion must be the stored one (409 Conflict); none (or
//     "0") means "whatever is stored" for most built-in resources and is
//     refused (422) for custom ones and Leases (ConditionalUpdateOnly);
//     one that is no number is 500 (writeVersion);
//   - deletionTimestamp and deletionGracePeriodSeconds may not be set
//     (422 Invalid: only a delete sets them), nor (a patch's) uid changed; an absent uid is the stored one;
//   - a generateName (updateGenerateNameErrors) and labels must be
//     valid (422 Invalid);
//   - a custom resource's generation rises with any change outside
//     metadata (its CRD has no status subresource), a Pod's with any
//     change of its spec;
//   - a Pod's, a Service's and a Namespace's status is kept as stored,
//     and a Namespace's spec.finalizers;
//   - a repeated owner reference is dropped (dedupOwnerReferences);
//   - an update that changes nothing writes nothing: no new
//     resourceVersion and no event, as etcd's store skips it.
//
// It reports whether it created the object.
func (s *Server) update(res Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return nil, false, err
	}
	if uid := u.GetUID(); uid != "" {
		// A PUT's uid is the storage's precondition, judged first.
		var stored types.UID
		if old := s.current[res.GroupResource()][objectKey{u.GetNamespace(), u.GetName()}]; old != nil {
			stored = old.GetUID()
		}
		if uid != stored {
			return nil, false, apierrors.NewConflict(res.GroupResource(), u.GetName(), fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, stored))
		}
	}
	return s.updateLocked(res, u)
}

// updateLocked is update with s.mu held.
func (s *Server) updateLocked(res Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	gr := res.GroupResource()
	dedupOwnerReferences(u)
	key := objectKey{u.GetNamespace(), u.GetName()}
	old := s.current[gr][key]
	if old == nil && !res.CreateOnUpdate {
		// Before the resourceVersion is parsed
		// (TestConformancePutToAMissingObjectAtAResourceVersionThatIsNoNumber).
		return nil, false, apierrors.NewNotFound(gr, u.GetName())
	}
	if old == nil && res.Namespaced {
		// The mutating admission of a create-on-update (NamespaceLifecycle)
		// runs before the store parses the resourceVersion
		// (TestConformanceLeasePutIntoAMissingNamespaceAtAResourceVersionThatIsNoNumber).
		if _, ok := s.current[namespaces][objectKey{name: u.GetNamespace()}]; !ok {
			return nil, false, apierrors.NewNotFound(namespaces, u.GetNamespace())
		}
	}
	rv, err := writeVersion(u) // before the store decides to create
	if err != nil {
		return nil, false, err
	}
	if old == nil {
		u.SetResourceVersion("")
		u.SetUID("")
		obj, err := s.createLocked(res, u)
		return obj, err == nil, err
	}
	switch {
	case rv == 0 && (res.Custom || res.ConditionalUpdateOnly):
		return nil, false, apierrors.NewInvalid(schemaGroupKind(res), u.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), int64(0), "must be specified for an update")})
	case rv != 0 && strconv.FormatUint(rv, 10) != old.GetResourceVersion():
		return nil, false, apierrors.NewConflict(gr, u.GetName(), errors.New(optimisticLock))
	}
	if err := validateTypeMeta(res, u); err != nil {
		return nil, false, err
	}
	if u.GetUID() == "" {
		u.SetUID(old.GetUID()) // BeforeUpdate fills in an absent uid
	}
	if errs := immutableErrors(u, old); len(errs) > 0 {
		return nil, false, apierrors.NewInvalid(res.GVK().GroupKind(), u.GetName(), errs)
	}
	if errs := append(updateGenerateNameErrors(res, u), s.labelErrorsLocked(u)...); len(errs) > 0 {
		return nil, false, apierrors.NewInvalid(res.GVK().GroupKind(), u.GetName(), errs)
	}
	u.SetResourceVersion(old.GetResourceVersion())
	u.SetUID(old.GetUID())
	u.SetCreationTimestamp(old.GetCreationTimestamp())
	u.SetGeneration(old.GetGeneration())
	u.SetManagedFields(nil)
	u.SetSelfLink("") // as on a create
	if keepsStatus(res) {
		// A Pod's, a Service's and a Namespace's PrepareForUpdate: the
		// status is the status subresource's to write, and a
		// Namespace's spec.finalizers the finalize subresource's
		// (TestConformanceAnUpdateKeepsTheStatusOfAPodAServiceOrANamespace).
		keepField(u, old, "status")
		if res.Resource == "namespaces" {
			keepField(u, old, "spec", "finalizers")
		}
	}
	if isPods(res) && !jsonvalue.Equal(u.Object["spec"], old.Object["spec"]) {
		// A Pod's PrepareForUpdate (updatePodGeneration).
		u.SetGeneration(old.GetGeneration() + 1)
	}
	if res.Custom {
		// The stored object as this version serves it: one stored before
		// a MoveCRD is read at the version moved to, and that alone is no
		// change of its spec (TestConformanceLabelPatchAfterAMoveKeepsTheGeneration).
		served := old.DeepCopy()
		served.SetAPIVersion(u.GetAPIVersion())
		if !jsonvalue.Equal(withoutMetadata(u), withoutMetadata(served)) {
			u.SetGeneration(old.GetGeneration() + 1)
		}
	}
	if jsonvalue.Equal(withoutTypeMeta(u), withoutTypeMeta(old)) && u.GetAPIVersion() == old.GetAPIVersion() {
		// No change. One stored at another version is written again,
		// at this one, as kube-apiserver stores it anew
		// (TestConformanceNoChangeWriteAfterAMove).
		return old, false, nil
	}
	return s.commitLocked(gr, modified, u), false, nil
}

// writeVersion is an update's resourceVersion as etcd's store parses it
// (ObjectResourceVersion): "" and "0" are none, 0; one that is no number
// is the parse error, 500.
func writeVersion(u *unstructured.Unstructured) (uint64, error) {
	if u.GetResourceVersion() == "" {
		return 0, nil
	}
	rv, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0, storageError(err.Error())
	}
	return rv, nil
}

// immutableErrors is ValidateObjectMetaUpdate's check of the fields
// only the system sets, once the resourceVersion has passed: the uid
// (a patch's, which is no precondition; a PUT's was one, in update),
// deletionTimestamp and deletionGracePeriodSeconds (only a delete sets
// them; a create wipes them), in its order.
func immutableErrors(u, old *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetUID() != old.GetUID() {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "uid"), u.GetUID(), "field is immutable"))
	}
	if ts := u.GetDeletionTimestamp(); ts != nil && old.GetDeletionTimestamp() == nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "deletionTimestamp"), ts, "field is immutable; may only be changed via deletion"))
	}
	if g := u.GetDeletionGracePeriodSeconds(); g != nil && old.GetDeletionGracePeriodSeconds() == nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "deletionGracePeriodSeconds"), *g, "field is immutable"))
	}
	return errs
}

// schemaGroupKind is how kube-apiserver names a resource in an Invalid
// error about its resourceVersion: the group and the resource's name.
func schemaGroupKind(res Resource) schema.GroupKind {
	return schema.GroupKind{Group: res.Group, Kind: res.Resource}
}

// withoutMetadata is u's fields but metadata: what kube-apiserver
// compares to decide whether an update of a custom resource raises its
// generation when its CRD has no status subresource, as none of this
// server's has (a change of status or of any other field counts, not
// only of spec).
func withoutMetadata(u *unstructured.Unstructured) map[string]any {
	m := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "metadata" {
			m[k] = v
		}
	}
	return m
}

func withoutTypeMeta(u *unstructured.Unstructured) map[string]any {
	m := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" {
			m[k] = v
		}
	}
	return m
}

// delete is DELETE: 404 for a missing object, 409 Conflict when a
// precondition (uid, resourceVersion) does not hold. A Pod is first
// written with its deletion mark (deletionTimestamp now,
// deletionGracePeriodSeconds 0). It returns the object's last state,
// stamped with the delete's resourceVersion.
func (s *Server) delete(res Resource, key objectKey, pre *metav1.Preconditions) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return nil, err
	}
	gr := res.GroupResource()
	old := s.current[gr][key]
	if old == nil {
		return nil, apierrors.NewNotFound(gr, key.name)
	}
	if pre != nil {
		if pre.UID != nil && *pre.UID != old.GetUID() {
			return nil, apierrors.NewConflict(gr, key.name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, old.GetUID()))
		}
		if pre.ResourceVersion != nil && *pre.ResourceVersion != old.GetResourceVersion() {
			return nil, apierrors.NewConflict(gr, key.name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, old.GetResourceVersion()))
		}
	}
	if isPods(res) {
		// A Pod's strategy deletes gracefully, at a grace period of 0
		// for one not scheduled (CheckGracefulDelete): the store first
		// writes the deletion mark, a MODIFIED, then deletes
		// (TestConformanceAPodsDeleteMarksItFirst).
		marked := old.DeepCopy()
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		marked.SetDeletionTimestamp(&now)
		marked.SetDeletionGracePeriodSeconds(new(int64))
		old = s.commitLocked(gr, modified, marked)
	}
	return s.commitLocked(gr, deleted, old.DeepCopy()), nil
}

// get is GET of one object.
func (s *Server) get(res Resource, key objectKey) (*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stillServedLocked(res); err != nil {
		return nil, err
	}
	obj := s.current[res.GroupResource()][key]
	if obj == nil {
		return nil, apierrors.NewNotFound(res.GroupResource(), key.name)
	}
	return obj, nil
}
