package sharedinformer_test

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/testenv"
)

// Octopus is a custom resource whose plural, "octopodes", no rule derives
// from its kind: only the server's discovery knows it.
type Octopus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Arms              int `json:"arms,omitempty"`
}

func (o *Octopus) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type OctopusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Octopus `json:"items"`
}

func (l *OctopusList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]Octopus, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Octopus)
	}
	return &c
}

// Octopuss is registered under a misspelt kind, as a user might: the
// server serves no such kind, and the error should point at Octopus.
type Octopuss struct{ Octopus }

var (
	zooGV      = schema.GroupVersion{Group: "zoo.listwatch.dev", Version: "v1"}
	octopusCRD = testenv.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}
)

// factoryScheme knows core/v1, networking/v1 and the Octopus types.
var factoryScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = networkingv1.AddToScheme(s)
	s.AddKnownTypes(zooGV, &Octopus{}, &OctopusList{})
	s.AddKnownTypeWithName(zooGV.WithKind("Octopuss"), &Octopuss{})
	metav1.AddToGroupVersion(s, zooGV)
	return s
}()
