package fakeapiserver

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// A JSON watch frame is built by hand, without json.Marshal's second
// pass over the object; it must be the bytes that pass makes, for every
// event type and for objects with characters JSON escapes.
func TestAJSONWatchFrameIsWhatJSONMarshalMakesOfTheWatchEvent(t *testing.T) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	u := storedConfigMap()
	_ = unstructured.SetNestedField(u.Object, "quote \" backslash \\ tab \t é \u2028 <script>", "data", "odd")
	obj, err := s.encodeObject(format{}, res, u)
	if err != nil {
		t.Fatal(err)
	}
	status, _ := encodeStatusObject(false, &metav1.Status{Message: "too <old> & gone", Code: 410})
	for _, typ := range []string{added, modified, deleted, bookmark, errorEv} {
		for _, object := range [][]byte{obj, status} {
			want, err := json.Marshal(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: object}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeEvent(format{}, typ, object)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want)+"\n" {
				t.Errorf("%s frame:\n got %s\nwant %s", typ, got, want)
			}
		}
	}
}

// Encoding a stored object sets apiVersion and kind on a copy: the
// stored object, which watches share, keeps its own.
func TestEncodingAnObjectLeavesTheStoredObjectAsItWas(t *testing.T) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	u := storedConfigMap()
	u.SetAPIVersion("stored/v0")
	u.SetKind("Stored")
	before := u.DeepCopy()
	obj, err := s.encodeObject(format{}, res, u)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(u.Object, before.Object) {
		t.Errorf("the stored object changed:\n got %v\nwant %v", u.Object, before.Object)
	}
	var got map[string]any
	if err := json.Unmarshal(obj, &got); err != nil {
		t.Fatal(err)
	}
	if got["apiVersion"] != "v1" || got["kind"] != "ConfigMap" {
		t.Errorf("encoded as %v %v, want v1 ConfigMap", got["apiVersion"], got["kind"])
	}
}
