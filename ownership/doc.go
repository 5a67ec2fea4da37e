// Package ownership marks the children a controller makes where an owner
// reference cannot reach: in another namespace than their owner, or
// cluster-wide children of a namespaced owner. Owner references never
// cross namespaces: the garbage collector takes an owner named in
// another namespace for one that is absent, and may delete the child,
// and EnqueueOwner looks for the owner in the child's namespace, so the
// skeleton's pattern fails there. A label and an annotation say whose
// child an object is instead.
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
//   - present, and mark.Owner(child) names this owner's key but another
//     UID: the child of an earlier owner of the same name, deleted and
//     made anew; delete it (with a UID precondition) and create this
//     owner's;
//   - present and not this key's: a user's object of the same name, or a
//     child of ours for another owner; leave it, and say so (an Event),
//     instead of finding out from AlreadyExists.
//
// That last case needs the children's informer to see objects that are
// not ours: no label selector that only ours carry (or a metadata-only
// informer of the kind, if a full one costs too much memory).
//
// Then, with no garbage collector to follow, deleting is the
// controller's: whether the owner exists or not, every child that
// ByIndex(OwnerIndex, key.String()) returns and the owner does not want
// is deleted: all of them for an owner that is gone, and for one that
// exists, those of an earlier owner of its name (another UID) and those
// it no longer wants (a target it dropped). A child whose owner went
// while the controller was down, or was made anew under its name, is
// found so: the child's add at start enqueues its owner's key.
//
// # Invariants
//
//   - Owner and Owns never claim an object this controller did not mark:
//     another manager's, or one without all three marks, is not ours
//     (TestOnlyAChildWithAllThreeMarksOfThisManagerIsOurs).
//   - Owns is per UID: an owner deleted and made anew under its name
//     does not own its predecessor's children
//     (TestAnOwnerMadeAnewUnderItsNameDoesNotOwnItsPredecessorsChildren;
//     the copier replaces such a child:
//     TestACopyLeftByAnEarlierOwnerOfTheSameNameIsReplaced).
package ownership
