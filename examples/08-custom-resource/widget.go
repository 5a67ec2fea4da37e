package main

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Widget, as the CRD
// (crd.go) declares them.
var GroupVersion = schema.GroupVersion{Group: "demo.listwatch.dev", Version: "v1"}

// Widget is a custom resource written by hand, as you would for a CRD of
// your own: TypeMeta and ObjectMeta inline, then spec and status. (A
// generator such as controller-gen writes the same, and its DeepCopy.)
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what the user asks for.
type WidgetSpec struct {
	Size  int               `json:"size"`
	Tags  map[string]string `json:"tags,omitempty"`
	Ports []int32           `json:"ports,omitempty"`
}

// WidgetStatus is what the controller saw: written through the status
// subresource only.
type WidgetStatus struct {
	Ready              bool  `json:"ready"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// WidgetList is the list type: the API server answers a LIST with one,
// so the scheme must know it too, as <Kind>List.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyInto copies w into out, sharing nothing: the maps and slices
// are copied too. A copy that shared Spec.Tags with the cache's object
// would let a reconcile that changes its copy change the cache (pitfall
// 2), which no test of a Widget without tags would notice.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Tags = maps.Clone(w.Spec.Tags)
	out.Spec.Ports = slices.Clone(w.Spec.Ports)
}

// DeepCopy returns a copy of w that shares nothing with it.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject makes Widget a runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopyObject makes WidgetList a runtime.Object; each item is copied
// deeply.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// AddToScheme registers Widget and WidgetList in the group's version,
// with the options types (ListOptions, ...) every group needs:
// what a generated package's AddToScheme does.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
