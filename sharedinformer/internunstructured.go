package sharedinformer

import (
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/internal/jsonvalue"
)

// An unstructured object holds what it repeats in maps of any: its
// apiVersion and kind, its metadata's namespace, its owners, and its
// managedFields, each entry a map whose fieldsV1 is a tree of maps, one
// for every field it names. That tree is most of an unstructured
// object's metadata, and one client writes it alike on every object it
// makes, so the interner shares a managedFields entry whole: an entry
// equal, field for field, to one seen before (same manager, operation,
// apiVersion, time, fieldsType, subresource, and an equal fieldsV1 tree)
// is replaced by that one. The strings are shared as for a Go type.
//
// Every map written here is the object's own, decoded for it a moment
// before; a shared entry is only ever read from then on.

// entryKey is what a managedFields entry is looked up by; its fieldsV1
// tree is then compared in full.
type entryKey struct {
	manager, operation, apiVersion, time, fieldsType, subresource string
}

// shareUnstructured shares what u repeats (above).
func (in *interner) shareUnstructured(u *unstructured.Unstructured) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.shareValue(u.Object, "apiVersion")
	in.shareValue(u.Object, "kind")
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	in.shareValue(meta, "namespace")
	in.shareValue(meta, "generateName")
	if owners, ok := meta["ownerReferences"].([]any); ok {
		for _, o := range owners {
			if owner, ok := o.(map[string]any); ok {
				for _, field := range [...]string{"apiVersion", "kind", "name", "uid"} {
					in.shareValue(owner, field)
				}
			}
		}
	}
	if entries, ok := meta["managedFields"].([]any); ok {
		for i, e := range entries {
			entry, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if kept := in.sharedEntry(entry); !sameMap(kept, entry) {
				entries[i] = kept
			}
		}
	}
}

// shareValue replaces m[field], if it is a string, with the table's copy
// of the same text (see shareString); it writes m only when that changes.
func (in *interner) shareValue(m map[string]any, field string) {
	s, ok := m[field].(string)
	if !ok {
		return
	}
	before := unsafe.StringData(s)
	shareString(in, &s)
	if unsafe.StringData(s) != before {
		m[field] = s
	}
}

// sameMap reports whether a and b are one map, not two equal ones.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sharedEntry is the table's managedFields entry equal to entry, or entry
// made the table's, its strings shared.
func (in *interner) sharedEntry(entry map[string]any) map[string]any {
	key, ok := keyOfEntry(entry)
	if !ok {
		return entry
	}
	if kept, ok := in.entries[key]; ok && jsonvalue.Equal(kept, entry) {
		return kept // compared whole: a kept entry a reader changed is not handed out again
	}
	size := sizeOfJSON(entry["fieldsV1"])
	if size > internLongest {
		return entry
	}
	for _, field := range [...]string{"manager", "operation", "apiVersion", "time", "fieldsType", "subresource"} {
		in.shareValue(entry, field)
	}
	in.makeRoom(size)
	in.entries[key] = entry
	return entry
}

// keyOfEntry is entry's key; false if it has a field that is not a
// string where the API has one, or a field the API does not define, so
// that an entry the key would not tell apart is never shared.
func keyOfEntry(entry map[string]any) (entryKey, bool) {
	var k entryKey
	for field, v := range entry {
		if field == "fieldsV1" {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return entryKey{}, false
		}
		switch field {
		case "manager":
			k.manager = s
		case "operation":
			k.operation = s
		case "apiVersion":
			k.apiVersion = s
		case "time":
			k.time = s
		case "fieldsType":
			k.fieldsType = s
		case "subresource":
			k.subresource = s
		default:
			return entryKey{}, false
		}
	}
	return k, true
}

// sizeOfJSON is roughly how many bytes v holds: 64 for each map entry
// or list item, beside its strings.
func sizeOfJSON(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for k, x := range v {
			n += 64 + len(k) + sizeOfJSON(x)
		}
		return n
	case []any:
		n := 0
		for _, x := range v {
			n += 64 + sizeOfJSON(x)
		}
		return n
	case string:
		return len(v)
	default:
		return 8
	}
}
