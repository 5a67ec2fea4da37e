package fakeapiserver_test

// More conformance cases of the order of type meta beside other faults
// (see conformance_typeorder_test.go), from a fourth review. Not
// modelled: a built-in patched to another version of its group that
// kube-apiserver converts (a Lease to coordination.k8s.io/v1beta1, 200
// there); the fake knows one version of each built-in and answers 422.

import (
	"context"
	"strings"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// detailsName is a Status's details.name.
func detailsName(obj map[string]any) string {
	d, _ := obj["details"].(map[string]any)
	n, _ := d["name"].(string)
	return n
}

// A custom resource patched out of its apiVersion whose patch also
// changes its uid: kube-apiserver's 500 (BeforeUpdate cannot find the
// object's kind) comes before the uid's validation (422). Before
// 1d220ad the fake's 500 came first too; now the uid's 422 does.
func TestConformancePatchOutOfACustomAPIVersionWithAUID(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, col := edgeCRD(ctx, t, tg, "r4uid.edges.listwatch.dev")
		code, a := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		rec.add("create: %s", outcome(code, a))
		code, obj := tg.patch(ctx, t, col+"/a", merge, map[string]any{"apiVersion": nil, "metadata": map[string]any{"uid": "00000000-0000-0000-0000-000000000000"}})
		rec.add("patch apiVersion null and another uid: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"apiVersion": nil, "metadata": map[string]any{"labels": map[string]any{"a": "-bad-"}}})
		rec.add("patch apiVersion null and a bad label: %s", outcome(code, obj))
	})
}

// A create of another kind with generateName: kube-apiserver
// generates the name first (its registry's Create, before validation),
// so its 422 names the object; the fake's 422 now names none.
func TestConformanceCreateOfAnotherKindWithGenerateName(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, col := edgeCRD(ctx, t, tg, "r4gen.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "")
		cr["metadata"] = map[string]any{"generateName": "gen-"}
		cr["kind"] = "Gear"
		code, obj := tg.do(ctx, t, "POST", col, "", cr)
		rec.add("create of another kind with generateName: %s %s, named from the prefix %v", outcome(code, obj), causesOf(obj), strings.HasPrefix(detailsName(obj), "gen-"))
	})
}

// A create that carries a resourceVersion and a fault validation
// finds (a bad name, a bad label, no name): kube-apiserver validates
// before its storage refuses the resourceVersion.
func TestConformanceCreateWithAResourceVersionAndAValidationFault(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", setMeta(cm("Bad_Name", nil, nil), "resourceVersion", "12345"))
		rec.add("configmap, bad name, rv: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", setMeta(cm("c", map[string]any{"a": "-bad-"}, nil), "resourceVersion", "12345"))
		rec.add("configmap, bad label, rv: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", "/api/v1/namespaces", "", map[string]any{"metadata": map[string]any{"name": "Bad_NS", "resourceVersion": "12345"}})
		rec.add("namespace, bad name, rv: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// Cases the brief named that should agree: a PUT of a custom
// resource with a stale rv and a bad label; a Lease created by a PUT with
// a bad name into a missing namespace; generateName with a bad prefix
// into a missing namespace.
func TestConformanceAgreeing(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, col := edgeCRD(ctx, t, tg, "r4agree.edges.listwatch.dev")
		_, a := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		stale := meta(a, "resourceVersion")
		_, a = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"n": int64(2)}})
		put := edgeObj(crd, "v1", "a")
		setMeta(put, "resourceVersion", stale)
		put["metadata"].(map[string]any)["labels"] = map[string]any{"a": "-bad-"}
		code, obj := tg.do(ctx, t, "PUT", col+"/a", "", put)
		rec.add("PUT stale rv and bad label: %s", outcome(code, obj))
		lcol := "/apis/coordination.k8s.io/v1/namespaces/no-such-namespace-r4/leases"
		code, obj = tg.do(ctx, t, "PUT", lcol+"/Bad_Name", "", lease("Bad_Name", "x"))
		rec.add("Lease PUT bad name missing ns: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", "/api/v1/namespaces/no-such-namespace-r4/configmaps", "", map[string]any{"metadata": map[string]any{"generateName": "Bad_"}})
		rec.add("generateName bad prefix missing ns: %s", outcome(code, obj))
		lcol = "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		l := setMeta(lease("m", "x"), "resourceVersion", "12345")
		l["metadata"].(map[string]any)["labels"] = map[string]any{"a": "-bad-"}
		code, obj = tg.do(ctx, t, "PUT", lcol+"/m", "", l)
		rec.add("Lease PUT create rv bad label: %s", outcome(code, obj))
	})
}

// A create of another kind with neither name nor generateName:
// kube-apiserver's Validate judges the type meta alone first,
// before it asks for a name (found by a fifth review: the fake asked
// for the name first).
func TestConformanceCreateOfAnotherKindWithNoName(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, col := edgeCRD(ctx, t, tg, "r5noname.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "")
		cr["metadata"] = map[string]any{}
		cr["kind"] = "Gear"
		code, obj := tg.do(ctx, t, "POST", col, "", cr)
		rec.add("custom, other kind, no name: %s %s", outcome(code, obj), causesOf(obj))
		cr = edgeObj(crd, "v1", "")
		cr["metadata"] = map[string]any{"resourceVersion": "12345"}
		cr["kind"] = "Gear"
		code, obj = tg.do(ctx, t, "POST", col, "", cr)
		rec.add("custom, other kind, no name, rv: %s %s", outcome(code, obj), causesOf(obj))
	})
}
