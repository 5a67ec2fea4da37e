package sharedinformer

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/internal/jsonvalue"
)

// An unstructured object holds its managedFields as a list of maps, each
// entry's fieldsV1 a tree of maps, one for every field it names: most of
// its metadata, and the same on every object one client writes. The
// interner shares such an entry whole: an entry equal to the one the
// table keeps for its manager, operation, apiVersion, time, fieldsType
// and subresource (every field present in one present in the other with
// the same value) is replaced by it, a write into the object's list, not
// a map.
//
// Nothing else of an unstructured object is shared. Its strings (the
// apiVersion, the namespace) sit in maps, and a write into a full small
// map, even of a key it holds, makes the runtime grow it: sharing a
// string there cost more than it saved
// (TestSharingUnstructuredObjectsDoesNotGrowTheHeapTheyHold holds the
// interner to writing none).
//
// Only an entry of the shape the API server writes is kept: string
// fields the API defines, and a fieldsV1 of maps alone (no numbers, so
// no -0 to take for 0). Each kept entry is counted toward the budget at
// what its maps cost, so the table holds about internBudget whatever the
// entries (TestTheInternerStaysWithinItsBudgetWhateverTheEntries).

// entryKey is what a managedFields entry is looked up by; the entry is
// then compared whole.
type entryKey struct {
	manager, operation, apiVersion, time, fieldsType, subresource string
}

// shareUnstructured shares u's managedFields entries (above).
func (in *interner) shareUnstructured(u *unstructured.Unstructured) {
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	entries, ok := meta["managedFields"].([]any)
	if !ok {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
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

// sameMap reports whether a and b are one map, not two equal ones.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sharedEntry is the table's managedFields entry equal to entry, or entry
// made the table's if it is of the shape kept (above) and its cost is
// within internLongest.
func (in *interner) sharedEntry(entry map[string]any) map[string]any {
	key, ok := keyOfEntry(entry)
	if !ok {
		return entry
	}
	// An entry of another shape is neither kept nor matched: only a tree
	// of maps alone makes equality identity (0 and -0 are equal numbers).
	size, ok := mapBytes(entry, entry["fieldsV1"])
	if !ok || size > internLongest {
		return entry
	}
	// Compared whole: a field present in one and not the other, or a kept
	// entry a reader changed in place, is not the same entry.
	if kept, ok := in.entries[key]; ok && jsonvalue.Equal(kept, entry) {
		return kept
	}
	in.makeRoom(size)
	in.entries[key] = entry
	return entry
}

// keyOfEntry is entry's key; false if it has a field the API does not
// define, or a string field that is not a string.
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

// A small map (eight entries or fewer) is one group of eight slots
// whatever it holds; a larger one about a slot and a half an entry. A
// slot of a map[string]any is a string header and an interface: 32 bytes.
const (
	smallMapBytes = 48 + 8*32 + 8 // header, slots, control word
	mapSlotBytes  = 48
)

// mapBytes is about what entry costs, its fieldsV1 tree included: its
// maps as above, and its keys' and strings' bytes; false if the tree
// holds anything but maps (fieldsV1 absent is an empty tree).
func mapBytes(entry map[string]any, fields any) (int, bool) {
	n := smallMapBytes
	for k, v := range entry {
		n += len(k)
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	if fields == nil {
		if _, present := entry["fieldsV1"]; present {
			return 0, false // null: kept as the server sent it, not shared
		}
		return n, true
	}
	tree, ok := treeBytes(fields)
	return n + tree, ok
}

// treeBytes is about what a fieldsV1 tree costs; false if it holds
// anything but maps.
func treeBytes(v any) (int, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, false
	}
	n := smallMapBytes
	if len(m) > 8 {
		n = len(m) * mapSlotBytes
	}
	for k, child := range m {
		c, ok := treeBytes(child)
		if !ok {
			return 0, false
		}
		n += len(k) + c
	}
	return n, true
}
