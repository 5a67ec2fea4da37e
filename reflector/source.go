package reflector

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Source says which collection a RESTListerWatcher lists and watches, and
// in which encoding.
type Source struct {
	// Resource is the collection's API group, version and plural name:
	// {Version: "v1", Resource: "configmaps"} (the core group is ""), or
	// {Group: "apps", Version: "v1", Resource: "deployments"}.
	Resource schema.GroupVersionResource
	// Namespace limits the collection to one namespace. "" (which is
	// metav1.NamespaceAll) means every namespace, and is what a
	// cluster-scoped resource (Nodes, Namespaces) needs.
	Namespace string
	// LabelSelector filters by labels on the server, such as "app=web".
	// "" selects everything.
	LabelSelector string
	// FieldSelector filters by fields the resource supports, such as
	// "metadata.name=web-0" or, for Pods, "spec.nodeName=node-1".
	// "" selects everything.
	FieldSelector string
	// Protobuf asks for application/vnd.kubernetes.protobuf instead of
	// JSON: smaller and faster to decode. Only built-in types have it, so
	// only NewTypedListerWatcher accepts it. Default: false, JSON.
	Protobuf bool
}

// Validate checks what can be checked without asking the server: a
// resource and version are named, the namespace is a valid name, and both
// selectors parse. A selector the server cannot parse would otherwise fail
// every LIST, forever; here it fails once, naming itself.
func (s Source) Validate() error {
	if s.Resource.Resource == "" || s.Resource.Version == "" {
		return fmt.Errorf("reflector: Source.Resource %q needs a version and a resource, such as {Version: \"v1\", Resource: \"configmaps\"}", s.Resource.String())
	}
	return s.ValidateScope()
}

// ValidateScope is Validate without the resource: the namespace and both
// selectors. A factory checks them before it looks the resource up, so a
// bad selector is reported even when the server cannot be reached.
func (s Source) ValidateScope() error {
	if s.Namespace != "" {
		if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
			return fmt.Errorf("reflector: namespace %q: %s", s.Namespace, strings.Join(errs, "; "))
		}
	}
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("reflector: label selector %q: %w", s.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		return fmt.Errorf("reflector: field selector %q: %w", s.FieldSelector, err)
	}
	return nil
}

// Canonical returns s with both selectors in one spelling: requirements
// sorted, spaces dropped. Two sources that select the same objects, such
// as labels "a=1,b=2" and "b=2, a=1", are then equal. s must be valid.
func (s Source) Canonical() (Source, error) {
	if err := s.Validate(); err != nil {
		return Source{}, err
	}
	sel, _ := labels.Parse(s.LabelSelector) // labels.Parse sorts by key
	s.LabelSelector = sel.String()
	fsel, _ := fields.ParseSelector(s.FieldSelector)
	var terms []string
	for _, r := range fsel.Requirements() {
		terms = append(terms, strings.TrimSpace(r.Field)+string(r.Operator)+fields.EscapeValue(r.Value))
	}
	slices.Sort(terms)
	s.FieldSelector = strings.Join(terms, ",")
	return s, nil
}

// String names the collection for people: "configmaps in namespace shop,
// labels app=web", "deployments.apps", "nodes, fields
// metadata.name=node-1", "pods, protobuf".
func (s Source) String() string {
	var b strings.Builder
	b.WriteString(s.Resource.GroupResource().String())
	if s.Namespace != "" {
		b.WriteString(" in namespace " + s.Namespace)
	}
	if s.LabelSelector != "" {
		b.WriteString(", labels " + s.LabelSelector)
	}
	if s.FieldSelector != "" {
		b.WriteString(", fields " + s.FieldSelector)
	}
	if s.Protobuf {
		b.WriteString(", protobuf")
	}
	return b.String()
}
