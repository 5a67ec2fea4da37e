package fakeapiserver

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateName is kube-apiserver's check of a new object's name, by
// resource: a namespace's must be a DNS label, a service's a DNS-1035
// label, a custom resource's only a valid path segment, and every other
// built-in's (configmaps, secrets, pods, leases) a DNS subdomain. A bad
// name is refused with 422 Invalid, so a client that builds names from
// data (a Lease named after a label value) meets the same refusal here.
func validateName(res Resource, name string) error {
	var msgs []string
	switch {
	case res.Custom:
		msgs = path.IsValidPathSegmentName(name)
	case res.Group == "" && res.Resource == "namespaces":
		msgs = validation.IsDNS1123Label(name)
	case res.Group == "" && res.Resource == "services":
		msgs = validation.IsDNS1035Label(name)
	default:
		msgs = validation.IsDNS1123Subdomain(name)
	}
	if len(msgs) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
	}
	return apierrors.NewInvalid(res.GVK().GroupKind(), name, errs)
}
