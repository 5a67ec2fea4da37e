package fakeapiserver_test

// Conformance cases of the order in which kube-apiserver judges a write
// of another kind or apiVersion beside other faults (a precondition, a
// name, a namespace): each failed on the fake when a review wrote it.
// Where the Invalid error's causes matter, they are recorded (field
// paths, in order), beside the status code and reason. Not modelled: the
// real server's one 422 with every cause of an update (metadata's, then
// kind, then apiVersion); the fake's names those of the first of its
// checks that finds any (a create's are all named:
// TestConformanceCreateWithSeveralValidationFaults).

import (
	"context"
	"fmt"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// causesOf lists a Status's causes' fields, in order.
func causesOf(obj map[string]any) string {
	d, _ := obj["details"].(map[string]any)
	cs, _ := d["causes"].([]any)
	out := ""
	for _, c := range cs {
		out += fmt.Sprintf("[%v]", c.(map[string]any)["field"])
	}
	return out
}

func edgeCRD(ctx context.Context, t *testing.T, tg *target, group string) (fakeapiserver.CRD, string) {
	crd := fakeapiserver.CRD{Group: group, Version: "v1", Kind: "Cog", Plural: "cogs"}
	tg.installCRD(ctx, crd)
	t.Cleanup(func() { tg.deleteCRD(context.Background(), crd) })
	awaitEdgeServed(ctx, t, tg, crd, "v1")
	return crd, edgeCol(tg, crd, "v1")
}

// A create of another kind that carries a resourceVersion:
// kube-apiserver validates (422, kind) before its storage refuses the
// resourceVersion (500); the fake did too before 7865d30, and now
// answers 500. A create of another kind with a bad name or labels:
// kube-apiserver's only cause is the kind (its type meta is validated
// first, alone); the fake's is now the name's or the labels'.
func TestConformanceCreateOfAnotherKindBesideOtherFaults(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, col := edgeCRD(ctx, t, tg, "r3create.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "c")
		cr["kind"] = "Gear"
		setMeta(cr, "resourceVersion", "12345")
		code, obj := tg.do(ctx, t, "POST", col, "", cr)
		rec.add("create of another kind with a resourceVersion: %s %s", outcome(code, obj), causesOf(obj))
		cr = edgeObj(crd, "v1", "Bad_Name")
		cr["kind"] = "Gear"
		code, obj = tg.do(ctx, t, "POST", col, "", cr)
		rec.add("create of another kind with a bad name: %s %s", outcome(code, obj), causesOf(obj))
		cr = edgeObj(crd, "v1", "c")
		cr["kind"] = "Gear"
		cr["metadata"].(map[string]any)["labels"] = map[string]any{"a": "-bad-"}
		code, obj = tg.do(ctx, t, "POST", col, "", cr)
		rec.add("create of another kind with a bad label: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// A merge patch of a built-in's kind or apiVersion: kube-apiserver's
// 422 is the patched object failing to decode, before the patch's name
// check and the resourceVersion precondition. The fake judges it after
// both (409, 400).
func TestConformancePatchOfABuiltInsKindBesideEarlierChecks(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		cms := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, cm := tg.do(ctx, t, "POST", cms, "", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "r3kind"}})
		rec.add("create: %s", outcome(code, cm))
		defer tg.do(ctx, t, "DELETE", cms+"/r3kind", "", nil)
		stale := meta(cm, "resourceVersion")
		_, cm = tg.patch(ctx, t, cms+"/r3kind", merge, map[string]any{"data": map[string]any{"x": "1"}})
		rec.add("moved on: %s", newer(stale, meta(cm, "resourceVersion")))
		for _, p := range []struct {
			what  string
			patch map[string]any
		}{
			{"kind Secret, stale rv", map[string]any{"kind": "Secret", "metadata": map[string]any{"resourceVersion": stale}}},
			{"apiVersion v2, stale rv", map[string]any{"apiVersion": "v2", "metadata": map[string]any{"resourceVersion": stale}}},
			{"kind Secret, another name", map[string]any{"kind": "Secret", "metadata": map[string]any{"name": "other"}}},
			{"kind Secret, another namespace", map[string]any{"kind": "Secret", "metadata": map[string]any{"namespace": "default"}}},
		} {
			code, obj := tg.patch(ctx, t, cms+"/r3kind", merge, p.patch)
			rec.add("patch %s: %s", p.what, outcome(code, obj))
		}
	})
}

// A merge patch that removes a custom resource's kind: kube-apiserver's
// 422 is again the decode's, before the name check and the precondition;
// the fake's validateTypeMeta came after both (409, 400).
func TestConformancePatchOutOfACustomKindBesideEarlierChecks(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		recordPatchesOutOf(ctx, t, tg, rec, "r3nokind.edges.listwatch.dev", "kind", "stale rv", "another name", "another namespace")
	})
}

// A merge patch that removes a custom resource's apiVersion:
// kube-apiserver's 500 comes after the name check (400) and the
// precondition (409); the fake answered 500 before both.
func TestConformancePatchOutOfACustomAPIVersionBesideEarlierChecks(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		recordPatchesOutOf(ctx, t, tg, rec, "r3noversion.edges.listwatch.dev", "apiVersion", "stale rv", "another name")
	})
}

// recordPatchesOutOf makes a custom resource "a" of a CRD of group and
// moves it on, then records merge patches that remove its field (kind or
// apiVersion) beside each fault named: a stale resourceVersion as
// precondition, another name, another namespace.
func recordPatchesOutOf(ctx context.Context, t *testing.T, tg *target, rec *recorder, group, field string, faults ...string) {
	const merge = "application/merge-patch+json"
	crd, col := edgeCRD(ctx, t, tg, group)
	_, a := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
	stale := meta(a, "resourceVersion")
	_, a = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"n": int64(2)}})
	rec.add("moved on: %s", newer(stale, meta(a, "resourceVersion")))
	metaOf := map[string]map[string]any{
		"stale rv":          {"resourceVersion": stale},
		"another name":      {"name": "b"},
		"another namespace": {"namespace": "default"},
	}
	for _, fault := range faults {
		code, obj := tg.patch(ctx, t, col+"/a", merge, map[string]any{field: nil, "metadata": metaOf[fault]})
		rec.add("patch %s null, %s: %s", field, fault, outcome(code, obj))
	}
}

// A merge patch that removes a built-in's apiVersion (alone, or with
// its kind) is 400 on kube-apiserver; the fake defaults it (200) and
// writes.
func TestConformancePatchOutOfABuiltInsAPIVersion(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		cms := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, cm := tg.do(ctx, t, "POST", cms, "", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "r3nover"}})
		rec.add("create: %s", outcome(code, cm))
		defer tg.do(ctx, t, "DELETE", cms+"/r3nover", "", nil)
		code, obj := tg.patch(ctx, t, cms+"/r3nover", merge, map[string]any{"apiVersion": nil, "data": map[string]any{"x": "1"}})
		rec.add("patch apiVersion null: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, cms+"/r3nover", merge, map[string]any{"apiVersion": nil, "kind": nil, "data": map[string]any{"x": "2"}})
		rec.add("patch apiVersion and kind null: %s", outcome(code, obj))
		_, obj = tg.do(ctx, t, "GET", cms+"/r3nover", "", nil)
		rec.add("data now: %v", obj["data"])
	})
}

// A create that carries a
// resourceVersion into a missing namespace: kube-apiserver's namespace
// admission answers 404 before its storage's 500; the fake answers 500.
func TestConformanceCreateWithAResourceVersionIntoAMissingNamespace(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		code, obj := tg.do(ctx, t, "POST", "/api/v1/namespaces/no-such-namespace-r3/configmaps", "",
			map[string]any{"metadata": map[string]any{"name": "c", "resourceVersion": "12345"}})
		rec.add("configmap: %s", outcome(code, obj))
		crd, _ := edgeCRD(ctx, t, tg, "r3nsrv.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "c")
		setMeta(cr, "resourceVersion", "12345")
		code, obj = tg.do(ctx, t, "POST", "/apis/"+crd.Group+"/v1/namespaces/no-such-namespace-r3/cogs", "", cr)
		rec.add("custom resource: %s", outcome(code, obj))
	})
}
