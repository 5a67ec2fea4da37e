package scale

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WidgetGroupVersion is the API group and version of Widget, the
// ladder's custom resource, as its CRD (crd.go) declares them.
var WidgetGroupVersion = schema.GroupVersion{Group: "bench.listwatch.dev", Version: "v1"}

// WidgetsResource is the resource that serves Widgets: namespaced, plural
// "widgets".
var WidgetsResource = WidgetGroupVersion.WithResource(Widgets)

// Widget is the ladder's custom resource: a Go type written by hand, as
// a controller's author (or controller-gen) writes one for a CRD.
// NewWidget(i) carries the same data as ConfigMap(i), so the two shapes
// differ only in how they are served and decoded.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}

// WidgetSpec is a Widget's data: the ~900-byte payload a ConfigMap of the
// ladder holds in data.payload.
type WidgetSpec struct {
	Payload string `json:"payload"`
}

// WidgetList is the list type the apiserver answers a LIST with; a scheme
// must know it as <Kind>List.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// NewWidget is the i-th Widget, in namespace ns-(i mod 10), with the
// labels and payload of ConfigMap(i). It has no server-set fields.
func NewWidget(i int) *Widget {
	return &Widget{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespaceOf(i),
			Name:      fmt.Sprintf("widget-%07d", i),
			Labels:    map[string]string{"app": "app-" + strconv.Itoa(i%100), "tier": "backend"},
		},
		Spec: WidgetSpec{Payload: payload(i)},
	}
}

// DeepCopyInto copies w into out, sharing nothing with it: ObjectMeta's
// maps and slices (labels, owners, managedFields) are copied too. The
// spec holds only a string, which Go never shares mutably.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a copy of w that shares nothing with it; nil for nil.
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

// AddToScheme registers Widget and WidgetList in WidgetGroupVersion,
// with the options types (ListOptions, WatchEvent, ...) every group
// needs: what a generated package's AddToScheme does. It never fails;
// the error is the signature runtime.SchemeBuilder expects.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(WidgetGroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, WidgetGroupVersion)
	return nil
}
