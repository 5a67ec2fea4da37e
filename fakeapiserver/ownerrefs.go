package fakeapiserver

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/internal/jsonvalue"
)

// dedupOwnerReferences keeps the first of each owner reference that u
// lists more than once, as kube-apiserver's create, update and patch
// handlers do (with a warning) before anything else judges the object.
// Only a whole repeat goes: two references with one uid that differ in
// another field are both kept, as there.
func dedupOwnerReferences(u *unstructured.Unstructured) {
	m, _ := u.Object["metadata"].(map[string]any)
	refs, _ := m["ownerReferences"].([]any)
	var kept []any
	for _, ref := range refs {
		if !slices.ContainsFunc(kept, func(k any) bool { return jsonvalue.Equal(k, ref) }) {
			kept = append(kept, ref)
		}
	}
	if len(kept) < len(refs) {
		m["ownerReferences"] = kept
	}
}
