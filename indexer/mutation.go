package indexer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
)

// ErrMutationDetectorOff is what CheckMutations returns when the Indexer
// was created without Options.DetectMutations.
var ErrMutationDetectorOff = errors.New("indexer: the mutation detector is off; set Options.DetectMutations to turn it on")

// MutationError reports cached objects that differ from the deep copy
// taken when they were stored: someone changed them in place (pitfall 2).
type MutationError struct {
	// Keys are the keys of the changed objects, sorted by namespace, then
	// name.
	Keys []informer.Key
}

// Error names every modified key.
func (e *MutationError) Error() string {
	names := make([]string, len(e.Keys))
	for n, key := range e.Keys {
		names[n] = key.String()
	}
	return fmt.Sprintf("indexer: %d cached object(s) were modified in place (DeepCopy before changing what the cache returns): %s",
		len(e.Keys), strings.Join(names, ", "))
}

// CheckMutations compares every stored object with the deep copy taken
// when it was stored. It returns a *MutationError naming the objects that
// differ, nil if none does, and ErrMutationDetectorOff if the detector is
// off. Cost: O(n) semantic deep comparisons under the read lock; call it in
// tests, or now and then, not on every read.
//
// A change made after the check is not seen until the next one, and a
// change made by a racing goroutine is also a data race: run tests with
// -race as well.
func (i *Indexer[T]) CheckMutations() error {
	if !i.detect {
		return ErrMutationDetectorOff
	}
	i.mu.RLock()
	defer i.mu.RUnlock()
	var changed []informer.Key
	for ns, sp := range i.spaces {
		for n, obj := range sp.objs {
			key := informer.Key{Namespace: ns, Name: sp.names[n]}
			if !equality.Semantic.DeepEqual(i.copies[key], runtime.Object(obj)) {
				changed = append(changed, key)
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.SortFunc(changed, compareKeys)
	return &MutationError{Keys: changed}
}

// snapshot returns the deep copy the detector keeps of obj, or nil when
// the detector is off.
func (i *Indexer[T]) snapshot(obj T) runtime.Object {
	if !i.detect {
		return nil
	}
	return obj.DeepCopyObject()
}

func compareKeys(a, b informer.Key) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
