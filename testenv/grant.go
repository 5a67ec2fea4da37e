package testenv

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Grant gives user, one of Options.Users, rules in namespace, as the
// admin: a Role named after the user holding rules, and a RoleBinding of
// it to the user. It is how a test proves a component needs no more than
// the rules it documents (leaderelection.Rules, sharding.SharderRules).
// RBAC's authorizer sees a new binding a moment after Grant returns: a
// test waits until the user's first request is allowed.
func (cp *ControlPlane) Grant(ctx context.Context, namespace, user string, rules []rbacv1.PolicyRule) error {
	scheme := runtime.NewScheme()
	if err := rbacv1.AddToScheme(scheme); err != nil {
		return err
	}
	metav1.AddToGroupVersion(scheme, rbacv1.SchemeGroupVersion)
	cfg := cp.Config()
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &rbacv1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if err := client.Post().Namespace(namespace).Resource("roles").Body(role).Do(ctx).Error(); err != nil {
		return fmt.Errorf("testenv: granting %s its role in %s: %w", user, namespace, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if err := client.Post().Namespace(namespace).Resource("rolebindings").Body(binding).Do(ctx).Error(); err != nil {
		return fmt.Errorf("testenv: binding %s its role in %s: %w", user, namespace, err)
	}
	return nil
}
