package informer

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrInvalidKey is wrapped by every error that [ParseKey] and [KeyOf] return,
// so callers can test for it with errors.Is.
var ErrInvalidKey = errors.New("invalid object key")

// Key identifies one object within one resource: its namespace and name.
// Cluster-scoped objects (Nodes, Namespaces) have an empty Namespace.
//
// Every stage refers to objects by Key: the store indexes them by it, the
// DeltaFIFO queues per Key, handlers enqueue Keys into the workqueue, and a
// worker's reconcile receives one. Key is comparable, so it can be a map key
// and a workqueue item.
//
// Its text form (String, ParseKey) is client-go's: "namespace/name", or
// "name" when cluster-scoped.
type Key struct {
	Namespace string
	Name      string
}

// String returns "namespace/name", or "name" for a cluster-scoped key.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// KeyOf returns the key of obj. It fails if obj is nil (including a typed
// nil pointer), has no name, or has "/" in its name or namespace (the API
// server accepts neither, so such an object did not come from one).
func KeyOf(obj metav1.Object) (Key, error) {
	if isNil(obj) {
		return Key{}, fmt.Errorf("%w: the object is nil", ErrInvalidKey)
	}
	k := Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if p := k.problem(); p != "" {
		return Key{}, fmt.Errorf("%w for object %q in namespace %q: %s", ErrInvalidKey, k.Name, k.Namespace, p)
	}
	return k, nil
}

// KeyFor returns the key of obj without checking it, for use inline where
// obj came from the API server (through an informer, a lister or a
// response), which never serves an object without a valid name. It cannot
// fail for a non-nil obj; to check an object of unknown origin use KeyOf.
func KeyFor(obj metav1.Object) Key {
	return Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// ParseKey parses the text form of a Key: "namespace/name" or "name".
// Anything else is an error wrapping [ErrInvalidKey] that says what was
// wrong: an empty key, an empty namespace or name around the "/", or more
// than one "/".
func ParseKey(s string) (Key, error) {
	if s == "" {
		return Key{}, fmt.Errorf("%w: the key is empty", ErrInvalidKey)
	}
	k := Key{Name: s}
	if ns, name, namespaced := strings.Cut(s, "/"); namespaced {
		if ns == "" {
			return Key{}, fmt.Errorf("%w %q: the namespace before \"/\" is empty", ErrInvalidKey, s)
		}
		k = Key{Namespace: ns, Name: name}
	}
	if p := k.problem(); p != "" {
		return Key{}, fmt.Errorf("%w %q: %s", ErrInvalidKey, s, p)
	}
	return k, nil
}

// problem says what makes k invalid, or returns "" if k is valid. The two
// rules (a non-empty name; no "/" inside either part) are what make String
// and ParseKey exact inverses.
func (k Key) problem() string {
	switch {
	case k.Name == "":
		return "the name is empty"
	case strings.Contains(k.Name, "/"):
		return "the name contains \"/\" (a key has at most one)"
	case strings.Contains(k.Namespace, "/"):
		return "the namespace contains \"/\""
	}
	return ""
}
