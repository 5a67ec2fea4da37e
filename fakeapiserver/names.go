package fakeapiserver

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nameRule is kube-apiserver's check of a name for res: a namespace's
// and a service's must be a DNS label (a service's since
// RelaxedServiceNameValidation, GA and locked on in v1.37:
// TestConformanceAServiceNameMayStartWithADigit), and every other's
// (configmaps, secrets, pods, leases, custom resources) a DNS subdomain,
// as apiextensions-apiserver checks a custom resource's too. With prefix
// it checks a generateName, the start of such a name (a trailing '-'
// allowed).
func nameRule(res Resource) func(name string, prefix bool) []string {
	switch {
	case res.Group == "" && (res.Resource == "namespaces" || res.Resource == "services"):
		return apivalidation.NameIsDNSLabel
	default:
		return apivalidation.NameIsDNSSubdomain
	}
}

// generateNameErrors is ValidateObjectMeta's first cause on a create:
// a generateName, if any, must be a valid prefix of a name of res,
// whether or not it made the name.
func generateNameErrors(res Resource, u *unstructured.Unstructured) field.ErrorList {
	return prefixErrors(nameRule(res), u)
}

// updateGenerateNameErrors is an update's check of a generateName. Only
// a resource whose own update validation calls ValidateObjectMeta (a
// ConfigMap's, a Secret's, a Namespace's, a Pod's) judges it as on a
// create (TestConformanceGenerateNameOnAnUpdateOfAServiceOrAPod); every
// other's (a Service's, a Lease's, a custom resource's) gets only the
// generic check of every update (validateCommonFields), a path segment:
// no '/' or '%'
// (TestConformanceGenerateNameOnAnUpdateOfACustomResourceOrALease).
func updateGenerateNameErrors(res Resource, u *unstructured.Unstructured) field.ErrorList {
	switch {
	case res.Custom || res.Group != "":
	case res.Resource == "configmaps", res.Resource == "secrets", res.Resource == "namespaces", res.Resource == "pods":
		return prefixErrors(nameRule(res), u)
	}
	return prefixErrors(path.ValidatePathSegmentName, u)
}

// prefixErrors judges u's generateName, if any, with rule as a prefix.
func prefixErrors(rule func(name string, prefix bool) []string, u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if gn := u.GetGenerateName(); gn != "" {
		for _, msg := range rule(gn, true) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "generateName"), gn, msg))
		}
	}
	return errs
}

// nameErrors is ValidateObjectMeta's check of a new object's name,
// after its generateName: required, and valid for res. A bad name is
// refused with 422 Invalid, so a client that builds names from data (a
// Lease named after a label value) meets the same refusal here.
func nameErrors(res Resource, name string) field.ErrorList {
	path := field.NewPath("metadata", "name")
	if name == "" {
		return field.ErrorList{field.Required(path, "name or generateName is required")}
	}
	var errs field.ErrorList
	for _, msg := range nameRule(res)(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// labelErrorsLocked is ValidateObjectMeta's check of an object's labels
// on a create or an update, after its name: each key a qualified name
// (an optional DNS subdomain prefix and a name of at most 63
// characters), each value at most 63 characters of alphanumerics, '-',
// '_' and '.', beginning and ending with an alphanumeric. A bad one is
// refused with 422 Invalid, so a client that writes labels from data (a
// candidate's Lease labels) meets here the refusal a real server gives.
//
// A label's check reads the label alone, so one that passed passes on
// every later write: the pairs that passed are kept in s.validLabels
// and not checked again (a run writes a few labels over and over, on
// each Lease renewal and each reconcile's patch). s.mu must be held.
func (s *Server) labelErrorsLocked(u *unstructured.Unstructured) field.ErrorList {
	var unchecked map[string]string
	for k, v := range u.GetLabels() {
		if _, ok := s.validLabels[label{k, v}]; ok {
			continue
		}
		if unchecked == nil {
			unchecked = map[string]string{}
		}
		unchecked[k] = v
	}
	errs := metav1validation.ValidateLabels(unchecked, field.NewPath("metadata", "labels"))
	if len(errs) > 0 {
		return errs
	}
	for k, v := range unchecked {
		s.validLabels[label{k, v}] = struct{}{}
	}
	return nil
}

// label is one label, key and value.
type label struct{ key, value string }

// A generated name is generateName cut to maxGenerateNamePrefix, then
// a suffix of suffixLength characters from nameAlphabet, as
// kube-apiserver makes one (apiserver's storage/names): never longer
// than a DNS label, 63. kube-apiserver's suffix is random and it tries
// maxGenerateAttempts names before it answers 409 AlreadyExists.
const (
	suffixLength          = 5
	maxGenerateNamePrefix = 63 - suffixLength
	nameAlphabet          = "bcdfghjklmnpqrstvwxz2456789" // apimachinery's util/rand: no vowels, no 0 or 1
	maxGenerateAttempts   = 8
)

// generateNameLocked names u from its generateName with the next
// suffixes of a counter written in nameAlphabet (so a run is the same
// every time), trying again while the name is taken in gr, as
// kube-apiserver does, maxGenerateAttempts times at most: the last one
// tried is then taken and the create's 409. s.mu must be held.
func (s *Server) generateNameLocked(gr schema.GroupResource, u *unstructured.Unstructured) string {
	prefix := u.GetGenerateName()
	if len(prefix) > maxGenerateNamePrefix {
		prefix = prefix[:maxGenerateNamePrefix]
	}
	var name string
	for range maxGenerateAttempts {
		s.names++
		name = prefix + nameSuffix(s.names)
		if _, taken := s.current[gr][objectKey{u.GetNamespace(), name}]; !taken {
			break
		}
	}
	return name
}

// nameSuffix is the n-th generated suffix: n written in nameAlphabet.
func nameSuffix(n int) string {
	suffix := make([]byte, suffixLength)
	for i := suffixLength - 1; i >= 0; i, n = i-1, n/len(nameAlphabet) {
		suffix[i] = nameAlphabet[n%len(nameAlphabet)]
	}
	return string(suffix)
}
