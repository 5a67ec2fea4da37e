package reflector_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// Against the real apiserver under RBAC: its 403 for a service account
// without the right to list ConfigMaps reaches OnError as a Forbidden
// naming the account, and once RBAC grants the right the reflector
// syncs. The pace of the retries meanwhile is
// TestForbiddenIsReportedAndRetriedWithBackoffUntilGranted's, on the fake
// API server and simulated time.
func TestTheRealAPIServersForbiddenIsReportedAndTheReflectorSyncsOnceGranted(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{RBAC: true})
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	admin := cms.client
	cfg := cp.Config()
	cfg.BearerToken = serviceAccountToken(t, admin, ns, "reader")

	l := cmReflector(t, cfg, ns, nil)
	eventually(t, func() bool { return len(l.errs.all()) > 0 }, "no refusal reported")
	err := l.errs.all()[0]
	assert.True(t, apierrors.IsForbidden(err), "a real 403 reads as one: %v", err)
	assert.Contains(t, err.Error(), "system:serviceaccount:"+ns+":reader", "with the server's message")
	assert.Zero(t, l.store.count("replace"))

	grant(t, admin, ns, "reader")
	converged(t, l.store.state, cms)
}

// serviceAccountToken creates a service account and returns a token for
// it from the TokenRequest API. It has no RBAC rights yet.
func serviceAccountToken(t *testing.T, admin *rest.RESTClient, ns, name string) string {
	t.Helper()
	post(t, admin, fmt.Sprintf("/api/v1/namespaces/%s/serviceaccounts", ns),
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name}})
	out := post(t, admin, fmt.Sprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, name),
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}})
	token, _ := out["status"].(map[string]any)["token"].(string)
	require.NotEmpty(t, token)
	return token
}

// grant lets the service account get, list and watch ConfigMaps in ns.
func grant(t *testing.T, admin *rest.RESTClient, ns, account string) {
	t.Helper()
	post(t, admin, fmt.Sprintf("/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles", ns), map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]any{"name": "configmap-reader"},
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch"}}},
	})
	post(t, admin, fmt.Sprintf("/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ns), map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]any{"name": "configmap-reader"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmap-reader"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": account, "namespace": ns}},
	})
}

// post sends body as JSON to path and returns the decoded answer.
func post(t *testing.T, client *rest.RESTClient, path string, body map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	raw, err := client.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(data).Do(t.Context()).Raw()
	require.NoError(t, err, "POST %s", path)
	out := map[string]any{}
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}
