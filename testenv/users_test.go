package testenv_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
