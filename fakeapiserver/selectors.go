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

// matches reports whether obj is one this filter selects.
func (f filter) matches(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	if f.namespace != "" && obj.GetNamespace() != f.namespace {
		return false
	}
	if !f.labels.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	return f.fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}
