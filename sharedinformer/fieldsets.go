package sharedinformer

import (
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// fieldSets lets the objects of one informer's cache share what their
// managedFields repeat. An entry of managedFields says which fields one
// manager owns (FieldsV1: the fields' names, never their values), so
// every object a controller writes the same way carries the same bytes:
// 100k Widgets created by one client hold one field set between them,
// not 100k copies of it, and one copy each of the entry's manager,
// operation, apiVersion and fieldsType. It saves about 140 bytes of a
// 2.4 KiB ConfigMap with one small entry
// (BenchmarkFieldSetsHeldHeapPerObject: 2,384 against 2,248 bytes held
// an object); more for a Pod, whose field sets run to kilobytes and
// repeat across the Pods of one template.
//
// The objects of a cache are read-only (pitfall 2): an object shares its
// FieldsV1 with others, so writing into one changes them all. DeepCopy
// copies it, as before.
//
// It knows Go types, whose metadata is a metav1.ObjectMeta (typed and
// metadata-only informers); an unstructured object keeps its own. It
// keeps at most maxFieldSets sets, the first seen, for the informer's
// life; an object whose set is not among them keeps its own.
type fieldSets struct {
	mu   sync.Mutex
	sets map[string]*metav1.FieldsV1 // by their bytes; guarded by mu
}

// maxFieldSets bounds what fieldSets keeps: the distinct field sets of
// a resource's managers and shapes, in the tens in a real cluster.
const maxFieldSets = 4096

// share points obj's managedFields at the sets and strings other objects
// already hold, when they are the same. Cost: a hash of each entry's
// field set.
func (f *fieldSets) share(obj informer.Object) {
	owner, ok := obj.(interface{ GetObjectMeta() metav1.Object })
	if !ok {
		return
	}
	meta, ok := owner.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok || meta == nil || len(meta.ManagedFields) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sets == nil {
		f.sets = map[string]*metav1.FieldsV1{}
	}
	for i := range meta.ManagedFields {
		e := &meta.ManagedFields[i]
		e.Manager = unique.Make(e.Manager).Value()
		e.Operation = metav1.ManagedFieldsOperationType(unique.Make(string(e.Operation)).Value())
		e.APIVersion = unique.Make(e.APIVersion).Value()
		e.FieldsType = unique.Make(e.FieldsType).Value()
		e.Subresource = unique.Make(e.Subresource).Value()
		if e.FieldsV1 == nil {
			continue
		}
		if set, ok := f.sets[string(e.FieldsV1.Raw)]; ok {
			e.FieldsV1 = set
		} else if len(f.sets) < maxFieldSets {
			f.sets[string(e.FieldsV1.Raw)] = e.FieldsV1
		}
	}
}
