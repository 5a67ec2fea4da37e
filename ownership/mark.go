package ownership

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/internal/nilcheck"
	si "github.com/listwatch/informer/sharedinformer"
)

// The labels and the annotation a Mark sets on a child.
const (
	// ManagedByLabel names the controller that made the object: the
	// well-known label, whose value is the Mark's manager.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// OwnerUIDLabel holds the owner's UID (36 characters, a valid label
	// value): what tells the child of this owner from the child of an
	// earlier owner of the same name, and what a label selector can pick.
	OwnerUIDLabel = "ownership.listwatch.dev/owner-uid"
	// OwnerAnnotation holds the owner's key, "namespace/name" (or "name"
	// for a cluster-wide owner): an annotation, since a key has a "/" and
	// may be longer than a label value's 63 characters.
	OwnerAnnotation = "ownership.listwatch.dev/owner"
	// OwnerIndex is the name of the index Index builds: children by their
	// owner's key.
	OwnerIndex = "ownership.listwatch.dev/owner"
)

// Mark is what a controller writes on the children an owner reference
// cannot reach (see the package doc), and reads back to know whose they
// are. The zero Mark is not valid: make one with New. The marks do not
// hold the owner's kind: a controller with owners of two kinds uses a
// Mark (a manager name) per kind.
type Mark struct {
	manager string
}

// New returns the Mark of the controller named manager, a label value
// such as "secret-copier".
func New(manager string) (Mark, error) {
	if manager == "" {
		return Mark{}, fmt.Errorf("ownership: New: the manager is empty")
	}
	if errs := validation.IsValidLabelValue(manager); len(errs) > 0 {
		return Mark{}, fmt.Errorf("ownership: New: manager %q is not a label value: %s", manager, strings.Join(errs, "; "))
	}
	return Mark{manager: manager}, nil
}

// Manager returns the controller's name, the value of ManagedByLabel.
func (m Mark) Manager() string { return m.manager }

// Set marks child as owner's: the labels ManagedByLabel and
// OwnerUIDLabel, the annotation OwnerAnnotation. It keeps the child's
// other labels and annotations. owner must have a UID that is a label
// value, as the API server's are (it is an object read from the API
// server or a cache; TestSetRefusesAnOwnerUIDThatIsNotALabelValue). A
// nil child or owner is an error
// (TestSetOfANilChildOrOwnerIsAnErrorNotAPanic).
func (m Mark) Set(child, owner metav1.Object) error {
	if m.manager == "" {
		return fmt.Errorf("ownership: Set: the zero Mark marks nothing; make one with New")
	}
	if nilcheck.IsNil(child) {
		return fmt.Errorf("ownership: Set: the child is nil")
	}
	if nilcheck.IsNil(owner) {
		return fmt.Errorf("ownership: Set: the owner of %s is nil", informer.KeyFor(child))
	}
	if owner.GetUID() == "" {
		return fmt.Errorf("ownership: Set: owner %s has no UID; mark children with an owner read from the API server", informer.KeyFor(owner))
	}
	if errs := validation.IsValidLabelValue(string(owner.GetUID())); len(errs) > 0 {
		return fmt.Errorf("ownership: Set: owner %s has UID %q, which is not a label value (%s); the API server's UIDs are", informer.KeyFor(owner), owner.GetUID(), strings.Join(errs, "; "))
	}
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = m.manager
	labels[OwnerUIDLabel] = string(owner.GetUID())
	child.SetLabels(labels)
	annotations := child.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[OwnerAnnotation] = informer.KeyFor(owner).String()
	child.SetAnnotations(annotations)
	return nil
}

// Owner returns whose child obj is, if this controller marked it: the
// owner's key and UID. ok is false for an object this controller did not
// mark (a user's object of the same name, another controller's), which
// the controller must leave alone, and for a nil obj.
func (m Mark) Owner(obj metav1.Object) (key informer.Key, uid types.UID, ok bool) {
	if m.manager == "" || nilcheck.IsNil(obj) || obj.GetLabels()[ManagedByLabel] != m.manager {
		return informer.Key{}, "", false
	}
	uid = types.UID(obj.GetLabels()[OwnerUIDLabel])
	key, err := informer.ParseKey(obj.GetAnnotations()[OwnerAnnotation])
	if err != nil || uid == "" {
		return informer.Key{}, "", false
	}
	return key, uid, true
}

// Owns reports whether child is owner's: marked by this controller for
// an owner of that key and that UID. A child marked for an earlier owner
// of the same name (deleted and made anew) is this controller's, but not
// this owner's: Owner says ok, Owns says false.
func (m Mark) Owns(owner, child metav1.Object) bool {
	key, uid, ok := m.Owner(child)
	return ok && !nilcheck.IsNil(owner) && key == informer.KeyFor(owner) && uid == owner.GetUID()
}

// Enqueue is the handler for the children's informer: it adds the key
// of the owner each marked child names, on an add, an update (old and
// new) and a delete, so a child changed or deleted by someone else gets
// its owner reconciled, and a child whose owner is gone gets the gone
// owner's key (whose reconcile deletes it). Objects this controller did
// not mark enqueue nothing. A nil q gives a nil Handler.
func Enqueue[T informer.Object](q si.Enqueuer, m Mark) si.Handler[T] {
	return si.EnqueueMapped(q, func(obj T) []informer.Key {
		if key, _, ok := m.Owner(obj); ok {
			return []informer.Key{key}
		}
		return nil
	})
}

// Index is the index function of OwnerIndex, for the children's
// informer (sharedinformer.WithIndexers): each marked child under its
// owner's key, so that an owner's reconcile finds its children in every
// namespace with ByIndex(OwnerIndex, key.String()), even once the owner
// is gone.
func Index[T informer.Object](m Mark) indexer.IndexFunc[T] {
	return func(obj T) ([]string, error) {
		if key, _, ok := m.Owner(obj); ok {
			return []string{key.String()}, nil
		}
		return nil, nil
	}
}
