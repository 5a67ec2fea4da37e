package leaderelection

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Rules are the least a candidate needs, as RBAC rules for a Role in the
// Lease's namespace: get and update on the one Lease it names, and create
// on leases. Create cannot be limited to a name (RBAC checks a create
// before the object's name is known), so that rule has no resourceNames.
// The elector never lists, watches, patches or deletes.
func Rules(leaseName string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			APIGroups:     []string{"coordination.k8s.io"},
			Resources:     []string{"leases"},
			ResourceNames: []string{leaseName},
			Verbs:         []string{"get", "update"},
		},
		{
			APIGroups: []string{"coordination.k8s.io"},
			Resources: []string{"leases"},
			Verbs:     []string{"create"},
		},
	}
}
