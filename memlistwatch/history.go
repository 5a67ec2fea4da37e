package memlistwatch

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// Compact forgets the history before the current resourceVersion and
// returns it, as etcd's compaction does. Afterwards:
//
//   - a WATCH from an older resourceVersion gets one ERROR event, 410 Gone
//     (reason Expired), and ends: the events it asks for are gone;
//   - a continue token from a LIST at an older resourceVersion answers 410;
//   - a LIST with resourceVersionMatch=Exact at an older one answers 410.
//
// Open watches are not affected: they already have their events.
func (lw *ListerWatcher[T]) Compact() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.base = maps.Clone(lw.current)
	lw.compactedRV = lw.rv
	lw.history = nil
	return strconv.FormatInt(lw.rv, 10)
}

// stateAt returns the state of the collection at resourceVersion rv, which
// must be between compactedRV and lw.rv: base with the writes up to rv
// applied. Cost: O(len(base) + len(history)).
func (lw *ListerWatcher[T]) stateAt(rv int64) map[informer.Key]T {
	if rv == lw.rv {
		return lw.current
	}
	state := maps.Clone(lw.base)
	for _, c := range lw.history {
		if c.rv > rv {
			break
		}
		key := informer.Key{Namespace: c.obj.GetNamespace(), Name: c.obj.GetName()}
		if c.typ == watch.Deleted {
			delete(state, key)
		} else {
			state[key] = c.obj
		}
	}
	return state
}

// changesAfter returns the writes after resourceVersion rv, oldest first.
// rv must be compactedRV or later.
func (lw *ListerWatcher[T]) changesAfter(rv int64) []change[T] {
	i, _ := slices.BinarySearchFunc(lw.history, rv+1, func(c change[T], rv int64) int {
		return cmp.Compare(c.rv, rv)
	})
	return lw.history[i:]
}

// sortedKeys returns state's keys in the order of their text form, the
// order in which LIST pages and initial watch events come.
func sortedKeys[T informer.Object](state map[informer.Key]T) []informer.Key {
	keys := slices.Collect(maps.Keys(state))
	slices.SortFunc(keys, func(a, b informer.Key) int {
		return strings.Compare(a.String(), b.String())
	})
	return keys
}
