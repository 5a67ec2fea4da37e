package reflector_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// The backoff used against a server that keeps refusing: 200ms doubling
// to 1s, and the window over which the requests are counted.
const (
	refusedInitial = 200 * time.Millisecond
	refusedMax     = time.Second
	refusedWindow  = 4 * time.Second
)

func refusedBackoff(initial, max *time.Duration) {
	*initial, *max = refusedInitial, refusedMax
}

// A service account without the right to list ConfigMaps: every LIST is
// 403. The reflector says so through the error hook, retries at the
// backoff's pace, and syncs as soon as RBAC grants the right.
func TestForbiddenIsReportedAndRetriedWithBackoffUntilGranted(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{RBAC: true, Audit: true})
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	admin := cms.client
	cfg := cp.Config()
	cfg.BearerToken = serviceAccountToken(t, admin, ns, "reader")
	ua := agent(t)

	started := time.Now()
	l := cmReflector(t, withAgent(cfg, ua), ns, func(o *reflector.Options[*corev1.ConfigMap]) {
		refusedBackoff(&o.BackoffInitial, &o.BackoffMax)
	})
	time.Sleep(refusedWindow)
	lists := countRequests(t, cp, ua, "list")
	elapsed := time.Since(started)
	t.Logf("%d LISTs in %v, all 403", lists, elapsed.Round(time.Millisecond))
	assert.LessOrEqual(t, lists, maxAttempts(elapsed, refusedInitial, refusedMax), "the backoff bounds the retries")
	assert.GreaterOrEqual(t, lists, 3, "it keeps trying")
	reported := l.errs.all()
	require.NotEmpty(t, reported)
	for _, err := range reported {
		assert.True(t, apierrors.IsForbidden(err), "a 403 reads as one: %v", err)
	}
	assert.Zero(t, l.store.count("replace"))

	grant(t, admin, ns, "reader")
	converged(t, l.store.state, cms, 30*time.Second)
}

// A reflector for a custom resource whose CRD does not exist yet: every
// LIST is 404. It says so, retries at the backoff's pace, and syncs once
// the CRD is created.
func TestMissingCustomResourceIsReportedAndRetriedUntilItExists(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	admin := newConfigMaps(t, cp.Config(), ns).client
	widgets := schema.GroupVersionResource{Group: "listwatch.dev", Version: "v1", Resource: "widgets"}
	ua := agent(t)
	lw, err := reflector.NewUnstructuredListerWatcher(withAgent(cp.Config(), ua), reflector.Source{Resource: widgets, Namespace: ns})
	require.NoError(t, err)
	store, errs := newRecorder[*unstructured.Unstructured](), &errorLog{}
	opts := reflector.Options[*unstructured.Unstructured]{ListerWatcher: lw, Store: store, OnError: errs.hook}
	refusedBackoff(&opts.BackoffInitial, &opts.BackoffMax)
	started := time.Now()
	run(t, must(reflector.New(opts)))

	time.Sleep(refusedWindow)
	lists := countRequests(t, cp, ua, "list")
	elapsed := time.Since(started)
	t.Logf("%d LISTs in %v, all 404", lists, elapsed.Round(time.Millisecond))
	assert.LessOrEqual(t, lists, maxAttempts(elapsed, refusedInitial, refusedMax))
	assert.GreaterOrEqual(t, lists, 3)
	for _, err := range errs.all() {
		assert.True(t, apierrors.IsNotFound(err), "a missing resource reads as NotFound: %v", err)
	}

	require.NoError(t, cp.InstallCRD(t.Context(), testenv.CRD{Group: "listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}))
	post(t, admin, fmt.Sprintf("/apis/listwatch.dev/v1/namespaces/%s/widgets", ns),
		map[string]any{"apiVersion": "listwatch.dev/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}})
	eventually(t, func() bool { return len(store.state()) == 1 }, 30*time.Second, "the widget never arrived")
	assert.Contains(t, store.state(), ns+"/w1")
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
