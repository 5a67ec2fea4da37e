package simulation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// widget is the scenario's custom resource as a Go type, as a controller
// author writes one (or generates it): for the typed keeper, whose
// informer decodes Widgets into it rather than into unstructured maps.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              widgetSpec `json:"spec,omitempty"`
}

// widgetSpec is what the writers write: the tick of the last change.
type widgetSpec struct {
	Tick int `json:"tick,omitempty"`
}

// widgetList is a LIST's answer of Widgets, which the scheme must know too.
type widgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []widget `json:"items"`
}

// DeepCopyObject copies w, its metadata's maps and slices included.
func (w *widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject copies l and every item.
func (l *widgetList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*widget)
	}
	return &out
}

// widgetScheme knows the widget type at the typed keeper's version,
// CRDVersions[0]: its kind Widget and WidgetList, named explicitly since
// the Go types' names are not the kinds.
func widgetScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	gv := widgetsGVR().GroupResource().WithVersion(CRDVersions[0]).GroupVersion()
	s.AddKnownTypeWithName(gv.WithKind(widgetKind), &widget{})
	s.AddKnownTypeWithName(gv.WithKind(widgetKind+"List"), &widgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}
