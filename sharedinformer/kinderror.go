package sharedinformer

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KindError is InformerFor's error when ForResource names a resource
// that holds another kind than the informer's Go type: a typo of one
// built-in for another, or a CRD deleted and created again with another
// kind under the same plural. Such an informer could decode nothing the
// server sends.
type KindError struct {
	Type     reflect.Type                // the informer's Go type, such as *v1.Secret
	Kind     schema.GroupKind            // its kind, from the Scheme
	Resource schema.GroupVersionResource // the resource it was asked for
	Holds    schema.GroupKind            // the kind the resource holds, from discovery or the RESTMapper
}

// Error names the type, its kind, the resource and the kind it holds.
func (e *KindError) Error() string {
	return fmt.Sprintf("sharedinformer: %v is kind %s, but resource %s holds %s", e.Type, e.Kind, e.Resource.GroupResource(), e.Holds)
}
