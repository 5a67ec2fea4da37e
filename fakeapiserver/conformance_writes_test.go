package fakeapiserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// TestAnUnconditionalUpdateOfALeaseIsRefusedAsByKubeAPIServer: a PUT of
// an existing Lease without a resourceVersion is 422 (Leases' strategy
// refuses unconditional updates), in the fake as in kube-apiserver.
func TestAnUnconditionalUpdateOfALeaseIsRefusedAsByKubeAPIServer(t *testing.T) {
	conform(t, testenv.Shared(t), conformLeaseUnconditionalUpdate)
}

// TestACreateCarryingAResourceVersionIsRefusedAsByKubeAPIServer: a POST
// whose body carries a resourceVersion is 500, as etcd's store answers.
func TestACreateCarryingAResourceVersionIsRefusedAsByKubeAPIServer(t *testing.T) {
	conform(t, testenv.Shared(t), conformCreateWithResourceVersion)
}

// TestAnUpdateSettingDeletionTimestampIsRefusedAsByKubeAPIServer: a PUT
// or merge patch that sets deletionTimestamp is 422: only a delete sets
// it.
func TestAnUpdateSettingDeletionTimestampIsRefusedAsByKubeAPIServer(t *testing.T) {
	conform(t, testenv.Shared(t), conformDeletionTimestampOnUpdate)
}

// TestACustomResourcesEmptyLabelsAreDroppedAsByKubeAPIServer: a custom
// resource's empty or null labels are not kept, from a create or a patch
// removing the last label, so a later PUT without them changes nothing.
// (null: found by an adversarial review of the first fix.)
func TestACustomResourcesEmptyLabelsAreDroppedAsByKubeAPIServer(t *testing.T) {
	conform(t, testenv.Shared(t), conformCustomResourceEmptyLabels)
}

// A Lease's strategy refuses an unconditional update (AllowUnconditionalUpdate
// false): a PUT of an existing Lease without a resourceVersion is 422.
func conformLeaseUnconditionalUpdate(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
	code, obj := tg.do(ctx, t, "POST", col, "", lease("a", "x"))
	rec.add("create: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", lease("a", "y"))
	rec.add("PUT existing Lease without rv: %s", outcome(code, obj))
}
func conformCreateWithResourceVersion(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	code, obj := tg.do(ctx, t, "POST", col, "", setMeta(cm("a", nil, nil), "resourceVersion", "1"))
	rec.add("create with a resourceVersion: %s", outcome(code, obj))
	lcol := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
	code, obj = tg.do(ctx, t, "POST", lcol, "", setMeta(lease("l", "x"), "resourceVersion", "1"))
	rec.add("create Lease with a resourceVersion: %s", outcome(code, obj))
}
func conformDeletionTimestampOnUpdate(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, a := tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
	ts := time.Now().UTC().Format(time.RFC3339)
	code, obj := tg.do(ctx, t, "PUT", col+"/a", "", setMeta(setMeta(cm("a", nil, nil), "resourceVersion", meta(a, "resourceVersion")), "deletionTimestamp", ts))
	rec.add("PUT setting deletionTimestamp: %s deletionTimestamp set %v", outcome(code, obj), meta(obj, "deletionTimestamp") != "")
	code, obj = tg.patch(ctx, t, col+"/a", "application/merge-patch+json", map[string]any{"metadata": map[string]any{"deletionTimestamp": ts}})
	rec.add("PATCH setting deletionTimestamp: %s deletionTimestamp set %v", outcome(code, obj), meta(obj, "deletionTimestamp") != "")
}
func conformCustomResourceEmptyLabels(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	crd := fakeapiserver.CRD{Group: "emptylabels.listwatch.dev", Version: "v1", Kind: "Doohickey", Plural: "doohickeys"}
	tg.installCRD(ctx, crd)
	defer tg.deleteCRD(ctx, crd)
	col := "/apis/" + crd.Group + "/v1/namespaces/" + tg.namespace + "/doohickeys"
	waitFor(ctx, t, func() bool { code, _ := tg.do(ctx, t, "GET", col, "", nil); return code == 200 })
	obj := func(name string, labels map[string]any) map[string]any {
		m := map[string]any{"name": name}
		if labels != nil {
			m["labels"] = labels
		}
		return map[string]any{"apiVersion": crd.Group + "/v1", "kind": "Doohickey", "metadata": m, "spec": map[string]any{"n": int64(1)}}
	}
	hasLabels := func(o map[string]any) bool { _, ok := o["metadata"].(map[string]any)["labels"]; return ok }
	code, a := tg.do(ctx, t, "POST", col, "", obj("a", map[string]any{}))
	rec.add("create with empty labels: %s labels key %v", outcome(code, a), hasLabels(a))
	nullLabels := obj("n", nil)
	nullLabels["metadata"].(map[string]any)["labels"] = nil
	code, n := tg.do(ctx, t, "POST", col, "", nullLabels)
	rec.add("create with null labels: %s labels key %v", outcome(code, n), hasLabels(n))
	code, n2 := tg.do(ctx, t, "PUT", col+"/n", "", setMeta(obj("n", nil), "resourceVersion", meta(n, "resourceVersion")))
	rec.add("PUT without the null labels: %s %s", outcome(code, n2), newer(meta(n, "resourceVersion"), meta(n2, "resourceVersion")))
	code, b := tg.do(ctx, t, "POST", col, "", obj("b", map[string]any{"k": "v"}))
	rec.add("create b: %s", outcome(code, b))
	code, b2 := tg.patch(ctx, t, col+"/b", "application/merge-patch+json", map[string]any{"metadata": map[string]any{"labels": map[string]any{"k": nil}}})
	rec.add("patch removing the last label: %s labels key %v", outcome(code, b2), hasLabels(b2))
	code, b3 := tg.do(ctx, t, "PUT", col+"/b", "", setMeta(obj("b", nil), "resourceVersion", meta(b2, "resourceVersion")))
	rec.add("PUT without labels key: %s %s", outcome(code, b3), newer(meta(b2, "resourceVersion"), meta(b3, "resourceVersion")))
}
