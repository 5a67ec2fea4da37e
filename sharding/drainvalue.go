package sharding

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A drain names the controller it was issued for. The sharder decides an
// object's drain from its cache, which may not show yet that the object
// was adopted (its controller owner changed) a moment before: the object
// drained as an orphan is now the child of a parent the sharder is about
// to give to the very member the object is drained from, and it gives
// the parent with no step for a child it does not know. A member whose
// own cache shows the adoption but not yet the parent's label would then
// let the child go just as the parent arrives, and reconcile the parent
// without it; the acknowledgement is guarded by the child's
// resourceVersion, which the parent's label does not change
// (TestAChildAdoptedWhileDrainedIsNotLetGoAfterItsNewParentIsLabelledForItsMember).
//
// So the drain label's value is the UID of the controller owner the
// sharder saw (drainValue; its digest, if it is no label value or one of
// the values below), written in a PATCH guarded by the object's
// resourceVersion: it is true of that version. A member acknowledges a
// drain only while the object's controller is still that one, judged on
// the version its acknowledgement is guarded by, so no change can come
// between the look and the write: an adoption (or an orphaning) is itself
// a write to the object, and leaves its drain stale. A stale drain is
// neither acknowledged nor reconciled by its member: the sharder, once it
// sees the new controller, takes the drain back or drains the object
// anew for it (decide, childStep), and the member lets it go then.
//
// "true", the value of drains written before drains named their
// controller, is acknowledged as before, so that a new member never waits
// on an older sharder's drain (it keeps the window above open for those
// drains). The other way round, an older sharder leading after a newer
// one does not write a stale drain anew (for it a drained object on a
// live member waits for its acknowledgement), so an object adopted or
// orphaned while so drained stays drained on a newer member until a
// newer sharder leads or that member's term ends: upgrade sharders first.
// A controller that goes A to B and back to A before the member lets the
// object go makes the drain match again.

// drainForOldSharders is the drain label's value before drains named
// their controller: a member acknowledges it whatever the controller.
const drainForOldSharders = "true"

// drainOfOrphan is the drain label's value on an object with no
// controller owner.
const drainOfOrphan = "orphan"

// drainDigestPrefix begins the drain label's value that names a
// controller by its uid's digest.
const drainDigestPrefix = "sha256-"

// drainValue is the drain label's value the sharder writes on obj, as its
// cache shows obj: the UID of obj's controller owner, or drainOfOrphan.
// A UID the API server made is a valid label value (36 characters of hex
// and dashes), but an owner reference's uid is whatever its writer put
// there, and kube-apiserver checks only that it is not empty: one that
// is no label value ("urn:uuid:…", more than 63 characters) is named by
// its digest instead, "sha256-" and 56 hex digits, or every drain of the
// object would be refused with 422 Invalid and it would never leave its
// member (TestAnObjectWhoseControllersUIDIsNoLabelValueIsDrainedAndMoves).
// So is a uid that is a label value the drain label gives another meaning:
// "true", "orphan", or one that begins "sha256-" (a digest's), or a
// drain for that controller would not be stale on an object adopted or
// orphaned since (TestADrainForAControllerWhoseUIDIsADrainValueIsStaleForAnother).
func drainValue(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.UID == "" {
		return drainOfOrphan
	}
	uid := string(ref.UID)
	if len(validation.IsValidLabelValue(uid)) == 0 && uid != drainForOldSharders && uid != drainOfOrphan && !strings.HasPrefix(uid, drainDigestPrefix) {
		return uid
	}
	sum := sha256.Sum256([]byte(ref.UID))
	return drainDigestPrefix + hex.EncodeToString(sum[:28])
}

// staleDrain reports whether obj is drained for another controller than
// the one it has now (adopted, orphaned or given away since): not to be
// acknowledged, and to be drained anew.
func (s Shard) staleDrain(obj metav1.Object) bool {
	v := obj.GetLabels()[s.DrainLabel()]
	return v != "" && v != drainForOldSharders && v != drainValue(obj)
}
