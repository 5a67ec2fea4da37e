package fakeapiserver

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// decodeBodyByDeserializer is what decodeBody did for every built-in
// body before decodeTypedJSON: the universal deserializer, then the
// kind check. The fast path must agree with it.
func decodeBodyByDeserializer(s *Server, body []byte, res Resource) (*unstructured.Unstructured, error) {
	gvk := res.GVK()
	obj, got, err := s.codecs.UniversalDeserializer().Decode(body, &gvk, nil)
	if err != nil {
		return nil, err
	}
	if *got != gvk {
		return nil, fmt.Errorf("the body is a %s, not a %s", got, gvk)
	}
	if secret, ok := obj.(*corev1.Secret); ok {
		defaultSecret(secret)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// A JSON body of the resource's own kind is decoded without the
// deserializer's first pass, into what the deserializer makes of it:
// unknown fields dropped, ints kept, a missing kind defaulted, a
// Secret's stringData merged. Any other body takes the deserializer's
// path and gets its answer.
func TestAJSONBodyDecodesAsTheUniversalDeserializerDecodesIt(t *testing.T) {
	s := New()
	leases := s.resources[schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}]
	configMaps := s.resources[schema.GroupResource{Resource: "configmaps"}]
	secrets := s.resources[schema.GroupResource{Resource: "secrets"}]
	for _, c := range []struct {
		name string
		res  Resource
		body string
		fast bool // decodeTypedJSON takes it
	}{
		{"a Lease", leases, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"ns","resourceVersion":"7","labels":{"a":"b"}},"spec":{"holderIdentity":"x","leaseDurationSeconds":4,"renewTime":"2026-01-01T00:00:00.000000Z","leaseTransitions":3}}`, true},
		{"a ConfigMap with an unknown field", configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"tick":"3"},"surprise":{"x":1}}`, true},
		{"a body that names no kind", configMaps, ` {"metadata":{"name":"c"},"data":{"a":"b"}}`, true},
		{"a Secret with stringData", secrets, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"k":"v"},"data":{"j":"dg=="}}`, true},
		{"a body of another kind", configMaps, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, false},
		{"a body of another group", configMaps, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"c"}}`, false},
		{"a field of the wrong type", configMaps, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":1}}`, false},
		{"YAML", configMaps, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, fast := s.decodeTypedJSON([]byte(c.body), mediaJSON, c.res.GVK()); fast != c.fast {
				t.Errorf("decodeTypedJSON took it: %v, want %v", fast, c.fast)
			}
			got, gotErr := s.decodeBody([]byte(c.body), mediaJSON, c.res)
			want, wantErr := decodeBodyByDeserializer(s, []byte(c.body), c.res)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("error %v, the deserializer's %v", gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got.Object, want.Object) {
				t.Errorf("decoded\n%v\nthe deserializer decodes\n%v", got.Object, want.Object)
			}
		})
	}
}

// BenchmarkDecodeLeaseBody measures what a Lease renewal's PUT costs the
// server to read: its JSON body as a stored object.
func BenchmarkDecodeLeaseBody(b *testing.B) {
	s := New()
	leases := s.resources[schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}]
	body := []byte(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"shard-web.r0-0-1234abcd","namespace":"sim","uid":"00000000-0000-4000-8000-000000000042","resourceVersion":"4242","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"lease.shard.listwatch.dev/member":"r0-0-1234abcd","lease.shard.listwatch.dev/ring":"web"}},"spec":{"holderIdentity":"r0-0-1234abcd","leaseDurationSeconds":4,"acquireTime":"2026-01-01T00:00:01.000000Z","renewTime":"2026-01-01T00:00:31.500000Z","leaseTransitions":0}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.decodeBody(body, mediaJSON, leases); err != nil {
			b.Fatal(err)
		}
	}
}
