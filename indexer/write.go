package indexer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
)

// Every write follows the same two phases, which is what makes it atomic:
//
//  1. validate: compute the key and run every IndexFunc, touching nothing;
//     any error returns here, and the Indexer is exactly as it was;
//  2. apply: store the object and re-file its key in every index. Nothing
//     in this phase can fail.
//  3. trace: only once the write is applied whole, so that a trace hook
//     that panics cannot stop it half-way
//     (TestATraceHookThatPanicsLeavesEveryIndexExact).

// Add stores obj under its key, replacing any object already stored there,
// and updates every index. Cost: O(1) plus one call of each IndexFunc and
// the index work for the values that changed.
//
// It fails, and changes nothing, if obj is nil (or a typed nil pointer),
// has no valid key, or an IndexFunc returns an error.
//
// After Add the cache shares obj: neither the caller nor any reader may
// modify it.
func (i *Indexer[T]) Add(obj T) error { return i.store("Add", obj) }

// Update is the same upsert as [Indexer.Add], at the same cost. It exists so
// that the caller says which one it means, and the trace says it too.
func (i *Indexer[T]) Update(obj T) error { return i.store("Update", obj) }

func (i *Indexer[T]) store(op string, obj T) error {
	key, err := informer.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("indexer: %s: %w", op, err)
	}
	snapshot := i.snapshot(obj) // a deep copy can be slow: take it before locking

	i.mu.Lock()
	defer i.mu.Unlock()
	values, err := i.valuesOf(key, obj)
	if err != nil {
		return fmt.Errorf("indexer: %s: %w", op, err)
	}

	i.putLocked(key, obj)
	if i.detect {
		i.copies[key] = snapshot
	}
	var changes []string // the KindIndexChanged details, built only for a hook
	if i.trace != nil {
		changes = make([]string, len(i.names))
	}
	for n, name := range i.names {
		if detail := i.refile(name, key, values[n]); detail != "" {
			changes[n] = detail
		}
	}
	if i.trace != nil {
		detail := "added"
		if op == "Update" {
			detail = "updated"
		}
		i.emit(KindStored, key, obj.GetResourceVersion(), detail)
		i.emitIndexChanges(key, changes)
	}
	return nil
}

// Delete removes the object stored under obj's key and takes the key out of
// every index. Only the key of obj matters, not its content. Deleting a key
// that is not stored does nothing and is not an error. Cost: O(1) plus the
// index work for the key's current values.
func (i *Indexer[T]) Delete(obj T) error {
	key, err := informer.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("indexer: Delete: %w", err)
	}

	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.getLocked(key); !ok {
		return nil
	}
	i.removeLocked(key)
	delete(i.copies, key) // a no-op on a nil map, when the detector is off
	var changes []string  // the KindIndexChanged details, built only for a hook
	if i.trace != nil {
		changes = make([]string, len(i.names))
	}
	for n, name := range i.names {
		if detail := i.refile(name, key, nil); detail != "" {
			changes[n] = detail
		}
	}
	if i.trace != nil {
		i.emit(KindDeleted, key, obj.GetResourceVersion(), "")
		i.emitIndexChanges(key, changes)
	}
	return nil
}

// Replace makes objs the whole content of the Indexer: keys not in objs are
// dropped, and every index is rebuilt from scratch. Cost: O(m) for m =
// len(objs): one call of each IndexFunc per object, plus the index work;
// the old content is dropped whole, not object by object.
//
// It is atomic: every object is validated first (not nil, a valid key, no
// key twice, every IndexFunc succeeds), and on any error the Indexer is
// unchanged. It emits one KindReplaced trace event with counts, not one
// event per object.
func (i *Indexer[T]) Replace(objs []T) error {
	keys := make([]informer.Key, len(objs))
	position := make(map[informer.Key]int, len(objs))
	for n, obj := range objs {
		key, err := informer.KeyOf(obj)
		if err != nil {
			return fmt.Errorf("indexer: Replace: item %d: %w", n, err)
		}
		if first, dup := position[key]; dup {
			return fmt.Errorf("indexer: Replace: key %s appears twice, as items %d and %d", key, first, n)
		}
		position[key] = n
		keys[n] = key
	}
	var copies map[informer.Key]runtime.Object
	if i.detect {
		copies = make(map[informer.Key]runtime.Object, len(objs))
		for n, obj := range objs {
			copies[keys[n]] = i.snapshot(obj)
		}
	}

	i.mu.Lock()
	defer i.mu.Unlock()
	spaces := map[string]*space[T]{}
	indices := make(map[string]*index[T], len(i.indices))
	for _, name := range i.names {
		indices[name] = newIndex(i.indices[name].fn)
	}
	for n, obj := range objs {
		values, err := i.valuesOf(keys[n], obj)
		if err != nil {
			return fmt.Errorf("indexer: Replace: %w", err)
		}
		spaceOf(spaces, keys[n].Namespace).put(keys[n].Name, obj)
		for v, name := range i.names {
			indices[name].file(keys[n], values[v])
		}
	}

	// Everything is valid: switch to the new content in one step, and
	// only then trace it (the counts compare it with the old content)
	// (TestATraceHookThatPanicsOnReplacedLeavesTheReplaceApplied).
	var counts string
	if i.trace != nil {
		counts = replaceCounts(i.spaces, spaces, len(objs))
	}
	i.spaces, i.count, i.indices, i.copies = spaces, len(objs), indices, copies
	if i.trace != nil {
		i.emit(KindReplaced, informer.Key{}, "", counts)
	}
	return nil
}

// valuesOf runs every IndexFunc on obj, in the order of i.names, and
// returns their values; values[n] belongs to index i.names[n]. It changes
// nothing, so a failure leaves the Indexer as it was. The caller holds mu.
func (i *Indexer[T]) valuesOf(key informer.Key, obj T) ([][]string, error) {
	values := make([][]string, len(i.names))
	for n, name := range i.names {
		vs, err := i.indices[name].valuesOf(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: index %q: %w", key, name, err)
		}
		values[n] = vs
	}
	return values, nil
}
