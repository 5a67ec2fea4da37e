package reflector

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
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
	// JSON: smaller and faster to decode. Built-in types have it, and the
	// metadata-only form of every resource; NewTypedListerWatcher and
	// NewMetadataListerWatcher accept it, NewUnstructuredListerWatcher
	// refuses it. Default: false, JSON.
	Protobuf bool
	// CBOR offers application/cbor first and JSON as the fallback
	// (KEP-4222). kube-apiserver answers in CBOR only with its
	// CBORServingAndStorage feature gate on (alpha, off by default in
	// 1.37), and in JSON otherwise, so asking never fails; the name says
	// "offers CBOR" either way, and each LIST's trace event says which
	// encoding came. Only NewUnstructuredListerWatcher (custom resources)
	// accepts it. Default: false, JSON.
	CBOR bool
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

// Canonical returns s with both selectors in one spelling, so that two
// sources that select the same objects are equal: labels "a=1,b=2",
// "b=2, a=1", "a==1,b in (2)" are all "a=1,b=2". A requirement of one
// value is spelt key=value or key!=value ("==" and "in (v)" are "=",
// "notin (v)" is "!="); the values of in and notin are sorted, without
// repeats; requirements are sorted, without repeats. Field selectors are
// spelt the same way ("==" is "="). s must be valid.
func (s Source) Canonical() (Source, error) {
	if err := s.Validate(); err != nil {
		return Source{}, err
	}
	sel, _ := labels.Parse(s.LabelSelector)
	reqs, _ := sel.Requirements()
	terms := make([]string, 0, len(reqs))
	for _, r := range reqs {
		term, err := canonicalRequirement(r)
		if err != nil {
			return Source{}, fmt.Errorf("reflector: label selector %q: %w", s.LabelSelector, err)
		}
		terms = append(terms, term)
	}
	s.LabelSelector = sortedTerms(terms)
	fsel, _ := fields.ParseSelector(s.FieldSelector) // "==" parses as "="
	terms = terms[:0]
	for _, r := range fsel.Requirements() {
		terms = append(terms, strings.TrimSpace(r.Field)+string(r.Operator)+fields.EscapeValue(r.Value))
	}
	s.FieldSelector = sortedTerms(terms)
	return s, nil
}

// canonicalRequirement spells r one way: its values sorted without
// repeats, and a one-value "==", "in" or "notin" as "=" or "!=".
func canonicalRequirement(r labels.Requirement) (string, error) {
	values := slices.Sorted(maps.Keys(r.Values()))
	op := r.Operator()
	if len(values) == 1 {
		switch op {
		case selection.DoubleEquals, selection.In:
			op = selection.Equals
		case selection.NotIn:
			op = selection.NotEquals
		}
	}
	c, err := labels.NewRequirement(r.Key(), op, values)
	if err != nil {
		return "", err
	}
	return c.String(), nil
}

// sortedTerms joins terms sorted by key ("a=1,!b", not "!b,a=1"), then
// by spelling, without repeats.
func sortedTerms(terms []string) string {
	slices.SortFunc(terms, func(a, b string) int {
		return cmp.Or(strings.Compare(strings.TrimPrefix(a, "!"), strings.TrimPrefix(b, "!")), strings.Compare(a, b))
	})
	return strings.Join(slices.Compact(terms), ",")
}

// String names the collection for people: "configmaps in namespace shop,
// labels app=web", "deployments.apps", "nodes, fields
// metadata.name=node-1", "pods, protobuf", "gizmos.example.com, offers
// CBOR". The encoding words say what is asked, not what the server
// answered: a server without the CBORServingAndStorage gate answers a
// CBOR offer in JSON, and the name, which labels metrics, stays one value
// whichever came. Each LIST's trace event (KindList) says which did.
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
	if s.CBOR {
		b.WriteString(", offers CBOR")
	}
	return b.String()
}
