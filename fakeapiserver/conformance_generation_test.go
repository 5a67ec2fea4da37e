package fakeapiserver_test

import (
	"context"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// A custom resource's generation, on a CRD without a status subresource
// (the fake's CRDs have none), counts every change outside metadata, as
// kube-apiserver's customResourceStrategy.PrepareForUpdate counts it
// (it compares the whole object but metadata), not only changes to
// spec: a controller that writes status.observedGeneration through the
// main endpoint bumps the generation on kube-apiserver, and must see
// that in the fake too.
func TestConformanceCustomResourceGenerationCountsEveryChangeOutsideMetadata(t *testing.T) {
	cp := testenv.Shared(t)
	conform(t, cp, customResourceGeneration)
}

func customResourceGeneration(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	crd := fakeapiserver.CRD{Group: "generation.listwatch.dev", Version: "v1", Kind: "Gizmo", Plural: "gizmos"}
	tg.installCRD(ctx, crd)
	defer tg.deleteCRD(ctx, crd)
	col := "/apis/" + crd.Group + "/v1/namespaces/" + tg.namespace + "/gizmos"
	waitFor(ctx, t, func() bool { code, _ := tg.do(ctx, t, "GET", col, "", nil); return code == 200 })
	gizmo := func(rv string, labels, status, extra map[string]any) map[string]any {
		m := map[string]any{"name": "a"}
		if rv != "" {
			m["resourceVersion"] = rv
		}
		if labels != nil {
			m["labels"] = labels
		}
		obj := map[string]any{"apiVersion": crd.Group + "/v1", "kind": "Gizmo", "metadata": m, "spec": map[string]any{"size": int64(1)}}
		if status != nil {
			obj["status"] = status
		}
		if extra != nil {
			obj["extra"] = extra
		}
		return obj
	}
	generation := func(obj map[string]any) any { return obj["metadata"].(map[string]any)["generation"] }
	code, a := tg.do(ctx, t, "POST", col, "", gizmo("", nil, nil, nil))
	rec.add("create: %s generation %v", outcome(code, a), generation(a))
	code, b := tg.do(ctx, t, "PUT", col+"/a", "", gizmo(meta(a, "resourceVersion"), nil, map[string]any{"observedGeneration": int64(1)}, nil))
	rec.add("update status only: %s generation %v", outcome(code, b), generation(b))
	code, c := tg.do(ctx, t, "PUT", col+"/a", "", gizmo(meta(b, "resourceVersion"), nil, map[string]any{"observedGeneration": int64(1)}, map[string]any{"n": int64(1)}))
	rec.add("update a top-level field only: %s generation %v", outcome(code, c), generation(c))
	code, d := tg.do(ctx, t, "PUT", col+"/a", "", gizmo(meta(c, "resourceVersion"), map[string]any{"x": "y"}, map[string]any{"observedGeneration": int64(1)}, map[string]any{"n": int64(1)}))
	rec.add("update labels only: %s generation %v", outcome(code, d), generation(d))
}
