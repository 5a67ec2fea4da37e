package fakeapiserver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storedConfigMap is a ConfigMap as the simulation's writers and
// controllers leave one: labels, annotations, an owner and some data.
func storedConfigMap() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("default")
	u.SetName("parent-17")
	u.SetUID("00000000-0000-4000-8000-000000000042")
	u.SetResourceVersion("4242")
	u.SetLabels(map[string]string{"shard.listwatch.dev/web": "replica-2", "shard.listwatch.dev/web-api": "replica-0"})
	u.SetAnnotations(map[string]string{"sim.listwatch.dev/web": "7", "sim.listwatch.dev/web-api": "6"})
	u.SetOwnerReferences(nil)
	_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"tick": "12", "note": "<a & b>"}, "data")
	return u
}

// BenchmarkEncodeWatchEvent measures what a watch pays per event it
// sends: the object as its version serves it, then the event's frame.
func BenchmarkEncodeWatchEvent(b *testing.B) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	u := storedConfigMap()
	b.ReportAllocs()
	for b.Loop() {
		obj, err := s.encodeObject(format{}, res, u)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := encodeEvent(format{}, modified, obj); err != nil {
			b.Fatal(err)
		}
	}
}
