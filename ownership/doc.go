// Package ownership marks the children a controller makes where an owner
// reference cannot reach: in another namespace than their owner, or
// cluster-wide children of a namespaced owner. Owner references never
// cross namespaces; one that tries is ignored by the garbage collector,
// and EnqueueOwner looks for the owner in the child's namespace, so the
// skeleton's pattern fails there without a word. A label and an
// annotation say whose child an object is instead.
//
// # Where it sits
//
// Between a controller's reconcile and the informer of its children:
//
//	reconcile(owner) ──Mark.Set──▶ child (labels managed-by, owner-uid; annotation owner key) ──▶ API server
//	children's informer ──Enqueue──▶ the owner's key ──▶ reconcile(owner)
//	children's informer ──Index (OwnerIndex)──▶ ByIndex(OwnerIndex, key) ──▶ the owner's children, anywhere
//
// # Usage
//
//	mark, err := ownership.New("secret-copier")
//	children, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory,
//		sharedinformer.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{ownership.OwnerIndex: ownership.Index[*corev1.ConfigMap](mark)}))
//	_, err = children.AddEventHandler(ownership.Enqueue[*corev1.ConfigMap](queue, mark))
//
// In the reconcile of an owner, for each child it should have:
//
//   - absent from the cache: create it, marked with mark.Set;
//   - present, and mark.Owns(owner, child): keep it in line with the owner;
//   - present, and mark.Owner(child) says ours but for another UID: the
//     child of an earlier owner of the same name, deleted and made anew;
//     delete it (with a UID precondition) and create this owner's;
//   - present and not ours: a user's object of the same name; leave it,
//     and say so (an Event), instead of finding out from AlreadyExists.
//
// That last case needs the children's informer to see objects that are
// not ours: no label selector that only ours carry (or a metadata-only
// informer of the kind, if a full one costs too much memory). And with
// no garbage collector to follow, deleting is the controller's: the
// reconcile of an owner that is gone deletes every child
// ByIndex(OwnerIndex, key.String()) returns. A child whose owner went
// while the controller was down is found the same way: the child's add
// at start enqueues the gone owner's key.
//
// # Invariants
//
//   - Owner and Owns never claim an object this controller did not mark:
//     another manager's, or one without all three marks, is not ours.
//   - Owns is per UID: an owner deleted and made anew under its name
//     does not own its predecessor's children.
package ownership
