package indexer

import "github.com/listwatch/informer"

// ReadOnly is a view of an Indexer that can only query it: every read
// method, no write. An informer hands out this view of its cache, so
// nothing but the informer can change what its handlers and listers see.
// It is a struct, not an interface, so it cannot be asserted back into
// the *Indexer behind it.
//
// The objects it returns are shared with the cache: do not modify them.
type ReadOnly[T informer.Object] struct{ i *Indexer[T] }

// ReadOnly returns a read-only view of i.
func (i *Indexer[T]) ReadOnly() ReadOnly[T] { return ReadOnly[T]{i: i} }

// Get is Indexer.Get.
func (r ReadOnly[T]) Get(key informer.Key) (T, bool) { return r.i.Get(key) }

// List is Indexer.List.
func (r ReadOnly[T]) List() []T { return r.i.List() }

// ListKeys is Indexer.ListKeys.
func (r ReadOnly[T]) ListKeys() []informer.Key { return r.i.ListKeys() }

// Len is Indexer.Len.
func (r ReadOnly[T]) Len() int { return r.i.Len() }

// HasIndex is Indexer.HasIndex.
func (r ReadOnly[T]) HasIndex(name string) bool { return r.i.HasIndex(name) }

// ByIndex is Indexer.ByIndex.
func (r ReadOnly[T]) ByIndex(name, value string) ([]T, error) { return r.i.ByIndex(name, value) }

// Namespace is Indexer.Namespace.
func (r ReadOnly[T]) Namespace(ns string) []T { return r.i.Namespace(ns) }

// IndexKeys is Indexer.IndexKeys.
func (r ReadOnly[T]) IndexKeys(name, value string) ([]informer.Key, error) {
	return r.i.IndexKeys(name, value)
}

// IndexValues is Indexer.IndexValues.
func (r ReadOnly[T]) IndexValues(name string) ([]string, error) { return r.i.IndexValues(name) }

// CheckMutations is Indexer.CheckMutations: it reads the cache and the
// snapshots taken when objects were stored, and changes neither.
func (r ReadOnly[T]) CheckMutations() error { return r.i.CheckMutations() }
