package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer/testenv"
)

// Under RBAC a user of Options.Users is authenticated (the server names
// it in the 403) but may list nothing, while the admin may list anything.
func TestAnOrdinaryUserIsForbiddenUnderRBACAndTheAdminIsNot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cp := testenv.Private(t, testenv.Options{RBAC: true, Users: []string{"alice"}})
	ns := cp.Namespace(t)

	cfg, err := cp.ConfigAs("alice")
	require.NoError(t, err)
	err = coreClient(t, cfg).Get().Namespace(ns).Resource("configmaps").Do(ctx).Error()
	require.True(t, apierrors.IsForbidden(err), "alice may not list: %v", err)
	assert.Contains(t, err.Error(), `User "alice"`)

	require.NoError(t, coreClient(t, cp.Config()).Get().Namespace(ns).Resource("configmaps").Do(ctx).Error())
}

func TestConfigAsAUserNotDeclaredIsAnError(t *testing.T) {
	_, err := testenv.Shared(t).ConfigAs("mallory")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"mallory"`)
}

// Grant gives a user of Options.Users a Role of rules in a namespace:
// once the authorizer sees the binding, the user may do what the rules
// allow there, and still nothing else.
func TestAUserGrantedRulesMayDoWhatTheyAllowAndNothingElse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cp := testenv.Private(t, testenv.Options{RBAC: true, Users: []string{"bob"}})
	ns := cp.Namespace(t)
	require.NoError(t, cp.Grant(ctx, ns, "bob", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"}}}))

	cfg, err := cp.ConfigAs("bob")
	require.NoError(t, err)
	client := coreClient(t, cfg)
	require.Eventually(t, func() bool {
		return client.Get().Namespace(ns).Resource("configmaps").Do(ctx).Error() == nil
	}, hangGuard, 50*time.Millisecond, "bob may list ConfigMaps once the binding takes effect")
	err = client.Get().Namespace(ns).Resource("secrets").Do(ctx).Error()
	assert.True(t, apierrors.IsForbidden(err), "bob may list no Secrets: %v", err)
}
