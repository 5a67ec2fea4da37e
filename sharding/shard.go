package sharding

import (
	"fmt"
	"time"

	informer "github.com/listwatch/informer"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// LabelPrefix begins the shard label's key: an object owned by member m
// of ring r is labelled LabelPrefix+r = m. Each member's informer selects
// on it, so the API server sends each member only its own objects.
const LabelPrefix = "shard.listwatch.dev/"

// DrainLabelPrefix begins the drain label's key: the sharder sets
// DrainLabelPrefix+r on an object whose owner must let it go, to the UID
// of the object's controller owner ("orphan" for none, a digest for a uid
// that is no label value, or is "true", "orphan" or "sha256-…":
// drainValue). The
// owner acknowledges by removing both labels (see Reconciler), while the
// object's controller is still the one the drain names.
const DrainLabelPrefix = "drain.shard.listwatch.dev/"

// Shard is one member of one ring: what a replica needs to know to scope
// its informers and to tell its objects from the others'.
type Shard struct {
	// Ring names the set of replicas sharing the objects; every replica
	// and the sharder of one controller use the same ring name.
	Ring string
	// Member is this replica's id for its current term.
	Member string
	// RequestTimeout bounds each request the library sends for this
	// member (a drain's acknowledgement, in Reconciler): one that a
	// stalled server never answers fails then, and its key is retried,
	// instead of holding a worker and the object forever. It also bounds
	// how long one call of a Reconciler waits, in all, for its cache to
	// show the changes 409s reported, plus one look of 10 ms after each
	// 409 (the waits for other calls in between not counted). Member sets it
	// to half its RenewDeadline, what the sharder gives its own requests.
	// Zero: DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Clock times RequestTimeout. Member sets it to its own Clock
	// (MemberConfig.Clock). Nil, or a nil pointer held in it:
	// informer.RealClock (informer.ClockOrReal).
	Clock informer.Clock
}

// DefaultRequestTimeout is a Shard's RequestTimeout when it has none:
// half the default RenewDeadline.
const DefaultRequestTimeout = 5 * time.Second

// requestTimeout is RequestTimeout, or DefaultRequestTimeout if unset.
func (s Shard) requestTimeout() time.Duration {
	if s.RequestTimeout > 0 {
		return s.RequestTimeout
	}
	return DefaultRequestTimeout
}

// Label is the shard label's key for the ring.
func (s Shard) Label() string { return LabelPrefix + s.Ring }

// DrainLabel is the drain label's key for the ring.
func (s Shard) DrainLabel() string { return DrainLabelPrefix + s.Ring }

// Selector is the label selector that scopes an informer to this
// member's objects: pass it to sharedinformer.WithLabels.
func (s Shard) Selector() string { return s.Label() + "=" + s.Member }

// Owns reports whether obj is this member's to reconcile: labelled with
// this member and not draining.
func (s Shard) Owns(obj metav1.Object) bool {
	labels := obj.GetLabels()
	return labels[s.Label()] == s.Member && labels[s.DrainLabel()] == ""
}

// RingKey is the key an object is placed on the ring by: its own
// key's text (informer.Key.String: namespace/name, or name for a
// cluster-scoped object), or, for an object with a controller owner
// reference, its owner's. Children so land with their owner, and a
// handler that maps a child's event to its owner's key
// (sharedinformer.EnqueueOwner, or EnqueueMapped with
// informer.ParseKey(RingKey(obj))) finds the owner in the same member's
// cache (TestTheRingKeyOfAClusterScopedObjectParsesAsItsKey). An owner
// reference does not say its owner's scope: the owner is taken to be in
// the object's namespace, as a namespaced owner must be, so the RingKey
// of a cluster-scoped owner's namespaced child is the child's namespace
// and the owner's name, not the owner's key, and a handler that maps it
// with informer.ParseKey enqueues no owner.
func RingKey(obj metav1.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return informer.Key{Namespace: obj.GetNamespace(), Name: ref.Name}.String()
	}
	return informer.KeyFor(obj).String()
}

// LeaseRingLabel and LeaseMemberLabel label every shard Lease with its
// ring and its member. The sharder finds a ring's Leases by the ring
// label, which names the ring exactly: a name prefix would not, since
// ring "web"'s prefix "shard-web-" is also the start of ring "web-api"'s
// Lease names.
const (
	LeaseRingLabel   = "lease.shard.listwatch.dev/ring"
	LeaseMemberLabel = "lease.shard.listwatch.dev/member"
)

// LeaseName is the name of member's shard Lease in ring:
// "shard-<ring>.<member>". Ring and member are DNS labels, which have no
// dots, so the dot tells where one ends: no two (ring, member) pairs
// share a name.
func LeaseName(ring, member string) string { return "shard-" + ring + "." + member }

// possibleMember reports whether id can name a member of ring: whether
// LeaseName(ring, id) is a valid Lease name (a DNS subdomain, the API
// server's rule for Lease names). A shard label whose value fails it —
// "Member_X" is a valid label value but no part of a Lease name — names
// no member: no member can hold such a Lease, and no sharder can take it
// over.
func possibleMember(ring, id string) bool {
	return len(validation.IsDNS1123Subdomain(LeaseName(ring, id))) == 0
}

// leaseLabels are the labels of member's shard Lease in ring.
func leaseLabels(ring, member string) map[string]string {
	return map[string]string{LeaseRingLabel: ring, LeaseMemberLabel: member}
}

// sharderLeaseName is the Lease the sharder candidates of ring elect a
// leader through.
func sharderLeaseName(ring string) string { return "sharder-" + ring }

// validateRing checks that ring makes valid label keys and Lease names.
func validateRing(ring string) error {
	if ring == "" {
		return &ConfigError{Field: "Ring", Reason: "is empty"}
	}
	if errs := validation.IsDNS1123Label(ring); len(errs) > 0 || len(ring) > 40 {
		return &ConfigError{Field: "Ring", Reason: fmt.Sprintf("(%q) must be a DNS label of at most 40 characters: it is part of label keys and Lease names", ring)}
	}
	return nil
}

// ConfigError is a configuration that a constructor rejects. Field names
// the field.
type ConfigError struct {
	Field  string
	Reason string
}

// Error says which field is wrong and why.
func (e *ConfigError) Error() string { return "sharding: " + e.Field + " " + e.Reason }
