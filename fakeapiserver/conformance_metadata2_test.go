package fakeapiserver_test

// Conformance cases a second review of the metadata fixes (7e68fe6..)
// found: each fails on the fake when written; the comment on each says
// what kube-apiserver answers, and what the fake answers.

import (
	"context"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// A generateName is validated as a name's prefix on an update only
// where the resource's own update validation calls ValidateObjectMeta
// (a ConfigMap's, a Secret's, a Namespace's). A custom resource's
// ValidateUpdate calls only ValidateObjectMetaUpdate, and the generic
// check every update gets (validateCommonFields) judges a generateName
// as a path segment (no '/' or '%'); a Lease's update validation is
// ValidateObjectMetaUpdate and its spec. So kube-apiserver stores a
// generateName "a." or "Up_" set by a PATCH or a PUT of a custom
// resource or a Lease (200). The fake judges every update's
// generateName as a DNS subdomain prefix and answers 422 (objects.go
// updateLocked: generateNameErrors, names.go).
func TestConformanceGenerateNameOnAnUpdateOfACustomResourceOrALease(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, ccol := edgeCRD(ctx, t, tg, "r13gnupd.edges.listwatch.dev")
		code, obj := tg.do(ctx, t, "POST", ccol, "", edgeObj(crd, "v1", "a"))
		rec.add("custom create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, ccol+"/a", merge, map[string]any{"metadata": map[string]any{"generateName": "a."}})
		rec.add("custom, patch generateName a.: %s %s, stored %q", outcome(code, obj), causesOf(obj), meta(obj, "generateName"))
		put := edgeObj(crd, "v1", "a")
		_, obj = tg.do(ctx, t, "GET", ccol+"/a", "", nil)
		put["metadata"] = map[string]any{"name": "a", "resourceVersion": meta(obj, "resourceVersion"), "generateName": "Up_"}
		code, obj = tg.do(ctx, t, "PUT", ccol+"/a", "", put)
		rec.add("custom, PUT generateName Up_: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.patch(ctx, t, ccol+"/a", merge, map[string]any{"metadata": map[string]any{"generateName": "a/"}})
		rec.add("custom, patch generateName a/: %s %s", outcome(code, obj), causesOf(obj))
		lcol := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		code, obj = tg.do(ctx, t, "PUT", lcol+"/r13gn", "", lease("r13gn", "x"))
		rec.add("lease create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, lcol+"/r13gn", merge, map[string]any{"metadata": map[string]any{"generateName": "a."}})
		rec.add("lease, patch generateName a.: %s %s", outcome(code, obj), causesOf(obj))
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r13gn"}))
		rec.add("configmap create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r13gn", merge, map[string]any{"metadata": map[string]any{"generateName": "a."}})
		rec.add("configmap, patch generateName a.: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// A PUT to a missing object of a resource without create-on-update (a
// ConfigMap, a custom resource) whose resourceVersion is no number:
// kube-apiserver's store answers 404 NotFound for the missing object
// before it parses the body's resourceVersion (only a Lease, which it
// would create, reaches the parse and its 500). The fake parses first,
// for every resource, and answers 500 (objects.go updateLocked:
// writeVersion before the old == nil check), a code client-go and the
// reflector's callers treat as retryable where 404 is final.
func TestConformancePutToAMissingObjectAtAResourceVersionThatIsNoNumber(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "PUT", col+"/r13missing", "", configMapWithMetadata(map[string]any{"name": "r13missing", "resourceVersion": "abc"}))
		rec.add("PUT to a missing ConfigMap with resourceVersion \"abc\": %s", outcome(code, obj))
		crd, ccol := edgeCRD(ctx, t, tg, "r13missing.edges.listwatch.dev")
		code, obj = tg.do(ctx, t, "PUT", ccol+"/missing", "", setMeta(edgeObj(crd, "v1", "missing"), "resourceVersion", "abc"))
		rec.add("PUT to a missing custom resource with resourceVersion \"abc\": %s", outcome(code, obj))
		lcol := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		code, obj = tg.do(ctx, t, "PUT", lcol+"/r13missing", "", setMeta(lease("r13missing", "x"), "resourceVersion", "abc"))
		rec.add("PUT to a missing Lease with resourceVersion \"abc\": %s", outcome(code, obj))
	})
}

// A JSON merge patch whose result does not decode, its metadata holding
// a field of the wrong type (a custom resource's label value 1, an
// annotation true, a creationTimestamp "bad"; a ConfigMap's label value
// 1): kube-apiserver's patcher answers 422 Invalid (a cause "patch":
// the patched object does not decode), not the 400 of a POST or PUT
// body. The fake decodes the merged object as a request body
// (patch.go: decodeBody, whose decodeCustomMetadata answers 400 for a
// custom resource since 89ee4e5; a built-in's typed decode, 400 too).
func TestConformanceMergePatchWhoseMetadataDoesNotDecode(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, ccol := edgeCRD(ctx, t, tg, "r13patchdecode.edges.listwatch.dev")
		code, obj := tg.do(ctx, t, "POST", ccol, "", edgeObj(crd, "v1", "a"))
		rec.add("custom create: %s", outcome(code, obj))
		for _, c := range []struct {
			what string
			meta map[string]any
		}{
			{"label value 1", map[string]any{"labels": map[string]any{"a": int64(1)}}},
			{"annotation true", map[string]any{"annotations": map[string]any{"a": true}}},
			{"creationTimestamp bad", map[string]any{"creationTimestamp": "bad"}},
		} {
			code, obj = tg.patch(ctx, t, ccol+"/a", merge, map[string]any{"metadata": c.meta})
			rec.add("custom, patch %s: %s", c.what, outcome(code, obj))
		}
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r13patchdecode"}))
		rec.add("configmap create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r13patchdecode", merge, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": int64(1)}}})
		rec.add("configmap, patch label value 1: %s", outcome(code, obj))
	})
}

// A write to a namespaced custom resource's all-namespaces path
// (/apis/<group>/<version>/<plural>, as a dynamic client without
// .Namespace(ns) sends it): apiextensions-apiserver serves it only for
// LIST and WATCH and hands any other verb to the next handler, whose
// answer is a plain 404, no Status. The fake answers every such write
// as a built-in's go-restful route does, 405 MethodNotAllowed
// (route.go: the POST since ba3b684, PUT and DELETE before it).
func TestConformanceWriteAtACustomResourcesAllNamespacesPath(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, _ := edgeCRD(ctx, t, tg, "r13allns.edges.listwatch.dev")
		all := "/apis/" + crd.Group + "/v1/" + crd.Plural
		code, obj := tg.do(ctx, t, "POST", all, "", edgeObj(crd, "v1", "a"))
		rec.add("POST %s: %s", crd.Plural, outcome(code, obj))
		code, obj = tg.do(ctx, t, "PUT", all, "", edgeObj(crd, "v1", "a"))
		rec.add("PUT %s: %s", crd.Plural, outcome(code, obj))
		code, obj = tg.do(ctx, t, "DELETE", all, "", nil)
		rec.add("DELETE %s: %s", crd.Plural, outcome(code, obj))
	})
}

// A POST to a namespaced built-in's all-namespaces path whose Accept
// the resource cannot serve (application/xml): go-restful finds no
// route for the method before it looks at the media types, so
// kube-apiserver answers 405 MethodNotAllowed. The fake negotiates the
// answer's type first and answers 406 NotAcceptable (route.go: the 405
// case comes after negotiate).
func TestConformanceCreateAtTheAllNamespacesPathWithAnUnservedAccept(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		code, obj := tg.do(ctx, t, "POST", "/api/v1/configmaps", "application/xml", configMapWithMetadata(map[string]any{"name": "r13xml", "namespace": tg.namespace}))
		rec.add("POST /api/v1/configmaps, Accept application/xml: %s", outcome(code, obj))
	})
}

// A create's metadata.generation: ValidateObjectMeta requires it to be
// non-negative, a cause of the create's one 422 between the name's and
// the labels'; a ConfigMap's strategy leaves it as sent, so 5 is stored
// as 5. The fake wipes it on every create of a built-in (objects.go
// createLocked: SetGeneration(0)), so -1 is 201 and the combined 422 of
// c1658bd ("every cause, in ValidateObjectMeta's order") lacks it.
func TestConformanceCreateWithAGeneration(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r13gen", "generation": int64(5)}))
		m, _ := obj["metadata"].(map[string]any)
		rec.add("create with generation 5: %s, stored %v", outcome(code, obj), m["generation"])
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r13genneg", "generation": int64(-1)}))
		rec.add("create with generation -1: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "Bad_Name", "generation": int64(-1), "labels": map[string]any{"a": "-bad-"}}))
		rec.add("create with a bad name, generation -1, a bad label: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// metadata.selfLink in a write's body: etcd's store clears it
// (PrepareObjectForStorage) before it stores the object, so
// kube-apiserver's answer, and the stored object, have none. The fake
// keeps it, a custom resource's too now that its metadata is read and
// written back as ObjectMeta (decode.go decodeCustomMetadata keeps every
// known field; objects.go createLocked wipes the system fields but this).
func TestConformanceSelfLinkIsNotStored(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r13self", "selfLink": "/x"}))
		rec.add("configmap create with selfLink: %s, stored %q", outcome(code, obj), meta(obj, "selfLink"))
		crd, ccol := edgeCRD(ctx, t, tg, "r13self.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "")
		cr["metadata"] = map[string]any{"name": "a", "selfLink": "/x"}
		code, obj = tg.do(ctx, t, "POST", ccol, "", cr)
		rec.add("custom create with selfLink: %s, stored %q", outcome(code, obj), meta(obj, "selfLink"))
		_, obj = tg.do(ctx, t, "GET", ccol+"/a", "", nil)
		rec.add("custom get: selfLink %q", meta(obj, "selfLink"))
	})
}
