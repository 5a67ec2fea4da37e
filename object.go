package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/internal/nilcheck"
)

// Object is the constraint on the type parameter T of every generic type in
// this module (Indexer[T], DeltaFIFO[T], Informer[T], Lister[T], ...).
//
// T is a pointer to a Kubernetes API object, such as *corev1.Pod or
// *unstructured.Unstructured: it has object metadata (name, namespace,
// labels, resourceVersion) and can be deep-copied and encoded. Both
// interfaces are implemented on the pointer, so a value type like
// corev1.Pod does not satisfy Object.
type Object interface {
	metav1.Object
	runtime.Object
}

// IsNil reports whether obj is nil, including a typed nil pointer.
//
// A typed nil (var p *corev1.Pod; T(p)) is not equal to a nil interface, so
// `any(obj) == nil` is false for it, and calling its methods panics. Every
// entry point that accepts a T checks it (KeyOf does) and returns an error
// instead.
func IsNil[T Object](obj T) bool { return isNil(obj) }

// isNil is IsNil for any value, so that KeyOf, which takes a metav1.Object,
// shares the same rule.
func isNil(v any) bool { return nilcheck.IsNil(v) }
