package indexer

import (
	"fmt"

	"github.com/listwatch/informer"
)

// The Kind values of the trace events an Indexer emits, all with Stage
// [informer.StageIndexer]. Events report what a write did: a write that
// fails, or a Delete of a key that is not stored, emits nothing.
const (
	// KindStored: Add or Update stored an object. Detail is "added" or
	// "updated" (the method called, not whether the key existed).
	KindStored = "stored"
	// KindDeleted: Delete removed a stored object.
	KindDeleted = "deleted"
	// KindReplaced: Replace swapped in new content. Detail has counts:
	// "3 objects: 1 added, 2 updated, 4 deleted". It is the only event a
	// Replace emits.
	KindReplaced = "replaced"
	// KindIndexChanged: a write moved a key between values of one
	// registered index, such as "app: [] → [web]" when an object labelled
	// app=web is added. It follows the KindStored or KindDeleted event of
	// the same write, once per index whose values for that key actually
	// changed, in index name order. The built-in namespace index emits
	// none: a key's namespace is part of the key, so it never changes.
	KindIndexChanged = "index-changed"
	// KindIndexAdded: AddIndexers built a new index, such as
	// "app: 3 values over 40 objects".
	KindIndexAdded = "index-added"
)

// emit sends one event to the trace hook. Callers check i.trace != nil
// first, so that with no hook not even the Detail string is built.
func (i *Indexer[T]) emit(kind string, key informer.Key, rv, detail string) {
	e := informer.TraceEvent{Stage: informer.StageIndexer, Kind: kind, ResourceVersion: rv, Detail: detail}
	if key.Name != "" {
		e.Key = key.String()
	}
	i.trace.Emit(e)
}

// indexChange formats a KindIndexChanged detail: "app: [web] → [db]".
func indexChange(name string, old, values []string) string {
	return fmt.Sprintf("%s: %v → %v", name, old, values)
}

// replaceCounts formats a KindReplaced detail by comparing the old and new
// content, n objects. Cost: O(len(old) + len(new)), paid only when tracing.
func replaceCounts[T informer.Object](old, new map[string]*space[T], n int) string {
	updated, before := 0, 0
	for ns, sp := range old {
		before += sp.len()
		if fresh, ok := new[ns]; ok {
			for _, name := range sp.names {
				if _, kept := fresh.pos[name]; kept {
					updated++
				}
			}
		}
	}
	return fmt.Sprintf("%d objects: %d added, %d updated, %d deleted", n, n-updated, updated, before-updated)
}
