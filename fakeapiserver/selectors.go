package fakeapiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// filter is what one LIST or WATCH asks for: a namespace ("" for all)
// and selectors. Only metadata.name and metadata.namespace are supported
// as fields, the ones every resource supports in kube-apiserver.
type filter struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
}

func newFilter(namespace string, opts metav1.ListOptions) (filter, error) {
	f := filter{namespace: namespace, labels: labels.Everything(), fields: fields.Everything()}
	var err error
	if opts.LabelSelector != "" {
		if f.labels, err = labels.Parse(opts.LabelSelector); err != nil {
			return f, apierrors.NewBadRequest(err.Error())
		}
	}
	if opts.FieldSelector != "" {
		if f.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
			return f, apierrors.NewBadRequest(err.Error())
		}
		for _, r := range f.fields.Requirements() {
			if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
				return f, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", r.Field))
			}
		}
	}
	return f, nil
}

// matches reports whether obj is one this filter selects. Every write
// calls it for every open watch, so it reads obj's labels where they are
// stored (labelsOf) and skips a selector that selects everything.
func (f filter) matches(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	if f.namespace != "" && obj.GetNamespace() != f.namespace {
		return false
	}
	if !f.labels.Empty() && !f.labels.Matches(labelsOf(obj)) {
		return false
	}
	return f.fields.Empty() || f.fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}

// labelsOf is obj's labels as labels.Set(obj.GetLabels()) sees them,
// without the copy GetLabels makes: a null value is "", and labels that
// are not a map of strings are none.
func labelsOf(obj *unstructured.Unstructured) labels.Labels {
	meta, _ := obj.Object["metadata"].(map[string]any)
	l, _ := meta["labels"].(map[string]any)
	for _, v := range l {
		if _, ok := v.(string); !ok && v != nil {
			return labels.Set(nil)
		}
	}
	return storedLabels(l)
}

// storedLabels reads labels in an object's unstructured metadata.
type storedLabels map[string]any

func (l storedLabels) Has(key string) bool { _, ok := l[key]; return ok }

func (l storedLabels) Get(key string) string { v, _ := l[key].(string); return v }

func (l storedLabels) Lookup(key string) (string, bool) {
	v, ok := l[key]
	s, _ := v.(string)
	return s, ok
}
