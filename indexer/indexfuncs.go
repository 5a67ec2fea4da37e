package indexer

import "github.com/listwatch/informer"

// IndexFunc computes the values under which an object is filed in one
// secondary index. An object may have no value (it is in no bucket of that
// index), one, or several (it is in each); duplicates count once.
//
// An IndexFunc must be a pure function of the object: the Indexer calls it
// once each time the object is stored, while holding its write lock, and
// never again on that object. So it must be quick, must not call back into
// the Indexer, and must not keep or later modify the slice it returns. An
// error rejects the write that called it, which then changes nothing.
type IndexFunc[T informer.Object] func(obj T) ([]string, error)

// NamespaceIndex is the name of the namespace index every [Indexer] has
// built in: its storage is laid out by namespace, so
// ByIndex(NamespaceIndex, ns), IndexValues(NamespaceIndex) and
// HasIndex(NamespaceIndex) work with no IndexFunc registered. Registering
// an index under this name, in [Options].Indexers or with AddIndexers, is
// an error. client-go's cache.NamespaceIndex has the same value, but there
// it names an index each informer must register.
const NamespaceIndex = "namespace"

// NamespaceIndexFunc files every object under its namespace: exactly one
// value, which is "" for a cluster-scoped object. It is client-go's
// cache.MetaNamespaceIndexFunc. An Indexer does not need it: its namespace
// index is built in ([NamespaceIndex]).
func NamespaceIndexFunc[T informer.Object](obj T) ([]string, error) {
	return []string{obj.GetNamespace()}, nil
}

// LabelIndexFunc returns an IndexFunc that files every object under the
// value of its label labelKey. An object without that label has no value,
// so it is in no bucket; an object whose label is present but empty is
// filed under "".
func LabelIndexFunc[T informer.Object](labelKey string) IndexFunc[T] {
	return func(obj T) ([]string, error) {
		value, ok := obj.GetLabels()[labelKey]
		if !ok {
			return nil, nil
		}
		return []string{value}, nil
	}
}
