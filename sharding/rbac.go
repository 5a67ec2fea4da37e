package sharding

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rules are what a sharder or a member needs of RBAC, in two places:
// Leases, for a Role in the Lease namespace; objects, for a Role in the
// sharded namespace (SharderConfig.Namespace), or a ClusterRole bound
// with a ClusterRoleBinding if the sharder shards every namespace or a
// cluster-scoped resource.
type Rules struct {
	Leases  []rbacv1.PolicyRule
	Objects []rbacv1.PolicyRule
}

// SharderRules are the least a sharder candidate needs to shard
// resources: get on leases, for its election Lease ("sharder-<ring>")
// and to read a member's Lease that its polls could not find (see
// members.seeUnlisted); list, to poll the ring's; create and update,
// for its election and to take a member's Lease over; delete, to collect
// a dead member's. Member Lease names are new every term, so the rule
// names no Lease (nor can a create: RBAC checks it before the name is
// known). On each resource: list and watch (its metadata
// informer), patch (the labels), and get (a parent's metadata, or an
// owner its cache lacks). Proved enough against a real kube-apiserver
// under RBAC by TestUnderRBACASharderAndItsMembersNeedNoMoreThanTheirRules
// (a join, a drain, a leave, a collected Lease and a takeover of a Lease
// stripped of its labels, with no request refused).
func SharderRules(resources []schema.GroupVersionResource) Rules {
	return Rules{
		Leases: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		},
		Objects: objectRules(resources, "get", "list", "watch", "patch"),
	}
}

// MemberRules are the least the library needs for a member of a ring
// over resources: get, create and update on leases, for its own Lease
// (on any, since its name is new every term); and patch on each
// resource, for Reconciler's acknowledgements of drains. The member's
// controller needs more on top, of its own: list and watch for its
// informers, at least. Proved enough by
// TestUnderRBACASharderAndItsMembersNeedNoMoreThanTheirRules.
func MemberRules(resources []schema.GroupVersionResource) Rules {
	return Rules{
		Leases: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		},
		Objects: objectRules(resources, "patch"),
	}
}

// objectRules allows verbs on resources, one rule per API group.
func objectRules(resources []schema.GroupVersionResource, verbs ...string) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, gvr := range resources {
		i := slices.IndexFunc(rules, func(r rbacv1.PolicyRule) bool { return r.APIGroups[0] == gvr.Group })
		if i < 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{gvr.Group}, Verbs: verbs})
			i = len(rules) - 1
		}
		if !slices.Contains(rules[i].Resources, gvr.Resource) {
			rules[i].Resources = append(rules[i].Resources, gvr.Resource)
		}
	}
	return rules
}
