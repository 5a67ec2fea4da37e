package replicas

import (
	"context"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// user is the testenv user every replica runs as. Under RBAC it may do
// only what the two Roles below allow, so the checker can take the
// ConfigMaps away (a 403 for a while) and leave the Leases.
const user = "replica"

// The Roles: one for the Leases (members, sharders, and the sharder's
// clean-up of dead members' Leases), one for the sharded ConfigMaps. The
// forbid fault deletes the second's RoleBinding and creates it again.
const leasesRole, configMapsRole = "replica-leases", "replica-configmaps"

var roleRules = map[string]rbacv1.PolicyRule{
	leasesRole:     {APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	configMapsRole: {APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
}

// rbacClient is a REST client for rbac.authorization.k8s.io/v1.
func rbacClient(admin *rest.Config) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := rbacv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	metav1.AddToGroupVersion(scheme, rbacv1.SchemeGroupVersion)
	cfg := rest.CopyConfig(admin)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &rbacv1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// grantAll creates both Roles and binds both to user.
func grantAll(ctx context.Context, client *rest.RESTClient, ns string) error {
	for name, rule := range roleRules {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
		if err := client.Post().Namespace(ns).Resource("roles").Body(role).Do(ctx).Error(); err != nil {
			return err
		}
		if err := bind(ctx, client, ns, name); err != nil {
			return err
		}
	}
	return nil
}

// bind binds Role name to user, with a RoleBinding of the same name.
func bind(ctx context.Context, client *rest.RESTClient, ns, name string) error {
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	err := client.Post().Namespace(ns).Resource("rolebindings").Body(binding).Do(ctx).Error()
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// unbind deletes RoleBinding name: from now on user's requests that
// needed it answer 403 Forbidden.
func unbind(ctx context.Context, client *rest.RESTClient, ns, name string) error {
	err := client.Delete().Namespace(ns).Resource("rolebindings").Name(name).Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// awaitAllowed waits until user may list ConfigMaps and Leases in ns:
// the authorizer learns of new bindings through its own informers, a
// moment after they are created.
func awaitAllowed(ctx context.Context, userCfg *rest.Config, ns string) error {
	core, leases, err := clients(userCfg)
	if err != nil {
		return err
	}
	for {
		err1 := core.Get().Namespace(ns).Resource("configmaps").Do(ctx).Error()
		err2 := leases.Get().Namespace(ns).Resource("leases").Do(ctx).Error()
		if err1 == nil && err2 == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
