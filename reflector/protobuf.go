package reflector

import "github.com/listwatch/informer"

// protobufMessage is what the API machinery's protobuf serializer needs
// of a Go type: the Marshal and Unmarshal methods generated for every
// built-in type in k8s.io/api.
type protobufMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// ProtobufCapable reports whether objects of type T can be read as
// protobuf. The built-in types can (the API server encodes them in
// protobuf, which decodes several times faster than JSON), and so can
// *metav1.PartialObjectMetadata, the metadata-only form of any resource;
// a custom resource's Go type cannot, and the API server serves custom
// resources in JSON anyway. sharedinformer.InformerFor reads protobuf whenever
// this says it can, as client-go's generated clients do.
func ProtobufCapable[T informer.Object]() bool {
	var zero T
	_, ok := any(zero).(protobufMessage)
	return ok
}
