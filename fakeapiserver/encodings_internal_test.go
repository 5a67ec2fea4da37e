package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storeConfigMap creates u on s (in namespace default) and returns the
// stored object.
func storeConfigMap(t *testing.T, s *Server, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	u.SetUID("")
	u.SetResourceVersion("")
	stored, err := s.create(s.resources[schema.GroupResource{Resource: "configmaps"}], u)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// A stored object is encoded once per form: every later answer in that
// form gets the same bytes, which are what encoding it afresh makes.
// An object the server does not store (made for one answer) is encoded
// every time.
func TestAStoredObjectIsEncodedOncePerFormWithTheBytesEncodingItAfreshMakes(t *testing.T) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	stored := storeConfigMap(t, s, storedConfigMap())
	for _, f := range []format{{}, {protobuf: true}, {as: partialObject}, {protobuf: true, as: partialObject}} {
		first, err := s.encodeObject(f, res, stored)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.encodeObject(format{protobuf: f.protobuf, as: f.as, statusProtobuf: true}, res, stored)
		afresh, _ := s.encodeServed(f, res, stored)
		if !bytes.Equal(first, afresh) {
			t.Errorf("%+v: encoded\n%q\nafresh\n%q", f, first, afresh)
		}
		if &again[0] != &first[0] {
			t.Errorf("%+v: encoded again, not kept", f)
		}
	}
	loose := storedConfigMap()
	a, _ := s.encodeObject(format{}, res, loose)
	b, _ := s.encodeObject(format{}, res, loose)
	if &a[0] == &b[0] {
		t.Error("an object the server does not store was kept")
	}
}

// A JSON LIST is written by hand from its items' kept encodings; it must
// be the bytes json.Marshal makes of the list as a map, for an empty
// list, a page with a continue token, and items with characters JSON
// escapes.
func TestAJSONListIsWhatJSONMarshalMakesOfTheList(t *testing.T) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	odd := storedConfigMap()
	odd.SetName("odd")
	_ = unstructured.SetNestedField(odd.Object, "quote \" backslash \\ tab \t é \u2028 <script>", "data", "odd")
	items := []*unstructured.Unstructured{storeConfigMap(t, s, storedConfigMap()), storeConfigMap(t, s, odd)}
	remaining := int64(3)
	for _, c := range []struct {
		items []*unstructured.Unstructured
		lm    metav1.ListMeta
	}{
		{nil, metav1.ListMeta{ResourceVersion: "5"}},
		{items, metav1.ListMeta{ResourceVersion: "9", Continue: "next<&>", RemainingItemCount: &remaining}},
	} {
		out := map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "metadata": listMetaJSON(c.lm)}
		objs := make([]any, 0, len(c.items))
		for _, u := range c.items {
			objs = append(objs, served(res, u).Object)
		}
		out["items"] = objs
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.encodeList(format{}, res, c.items, c.lm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("list\n%s\nwant\n%s", got, want)
		}
	}
}

// Compact drops the kept encodings of the objects it forgets, and keeps
// those of the objects the server still holds.
func TestCompactDropsTheEncodingsOfObjectsTheServerNoLongerHolds(t *testing.T) {
	s := New()
	res := s.resources[schema.GroupResource{Resource: "configmaps"}]
	old := storeConfigMap(t, s, storedConfigMap())
	versions := []*unstructured.Unstructured{old}
	for _, v := range []string{"once", "twice"} {
		u := versions[len(versions)-1].DeepCopy()
		u.SetAnnotations(map[string]string{"changed": v})
		next, _, err := s.update(res, u)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, next)
	}
	current := versions[2]
	for _, obj := range versions {
		if _, err := s.encodeObject(format{}, res, obj); err != nil {
			t.Fatal(err)
		}
	}
	s.Compact(s.ResourceVersion()) // keeps the last write, whose previous state is versions[1]
	if _, ok := s.encoded.get(old, encodingKey{gvk: res.GVK()}); ok {
		t.Error("the encoding of a version compacted away is still kept")
	}
	for _, obj := range []*unstructured.Unstructured{versions[1], current} {
		if _, ok := s.encoded.get(obj, encodingKey{gvk: res.GVK()}); !ok {
			t.Errorf("the encoding of %s, still held, was dropped", obj.GetAnnotations())
		}
	}
}

// A protobuf LIST is written by hand from its items' kept encodings; it
// must be the bytes the API machinery's protobuf serializer makes of the
// typed list (the items converted to their Go type, with no TypeMeta),
// for an empty list, a page with a continue token, ConfigMaps and Leases.
func TestAProtobufListIsTheTypedListsEncoding(t *testing.T) {
	s := New()
	configMaps := s.resources[schema.GroupResource{Resource: "configmaps"}]
	leases := s.resources[schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}]
	odd := storedConfigMap()
	odd.SetName("odd")
	_ = unstructured.SetNestedField(odd.Object, "quote \" é \u2028", "data", "odd")
	lease := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"namespace": "default", "name": "member-a", "labels": map[string]any{"ring": "web"}},
		"spec":     map[string]any{"holderIdentity": "a", "leaseDurationSeconds": int64(4), "renewTime": "2026-01-02T03:04:05.678901Z"}}}
	storedLease, err := s.create(leases, lease)
	if err != nil {
		t.Fatal(err)
	}
	remaining := int64(3)
	for _, c := range []struct {
		res   Resource
		items []*unstructured.Unstructured
		lm    metav1.ListMeta
	}{
		{configMaps, nil, metav1.ListMeta{ResourceVersion: "5"}},
		{configMaps, []*unstructured.Unstructured{storeConfigMap(t, s, storedConfigMap()), storeConfigMap(t, s, odd)},
			metav1.ListMeta{ResourceVersion: "9", Continue: "next", RemainingItemCount: &remaining}},
		{leases, []*unstructured.Unstructured{storedLease}, metav1.ListMeta{ResourceVersion: "11"}},
	} {
		want := typedProtobufList(t, s, c.res, c.items, c.lm)
		got, err := s.encodeList(format{protobuf: true}, c.res, c.items, c.lm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s list\n%q\nwant\n%q", c.res.Kind, got, want)
		}
	}
}

// typedProtobufList is a protobuf LIST as the API machinery makes it:
// the typed list, its items converted from the stored objects.
func typedProtobufList(t *testing.T, s *Server, res Resource, items []*unstructured.Unstructured, lm metav1.ListMeta) []byte {
	t.Helper()
	list, err := s.scheme.New(res.GroupVersion().WithKind(res.ListKind))
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]runtime.Object, 0, len(items))
	for _, u := range items {
		typed, err := s.typed(served(res, u))
		if err != nil {
			t.Fatal(err)
		}
		typed.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // items carry no TypeMeta
		objs = append(objs, typed)
	}
	if err := meta.SetList(list, objs); err != nil {
		t.Fatal(err)
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}
	acc.SetResourceVersion(lm.ResourceVersion)
	acc.SetContinue(lm.Continue)
	acc.SetRemainingItemCount(lm.RemainingItemCount)
	list.GetObjectKind().SetGroupVersionKind(res.GroupVersion().WithKind(res.ListKind))
	b, err := encodeProtobuf(list)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
