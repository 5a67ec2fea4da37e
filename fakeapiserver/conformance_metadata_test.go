package fakeapiserver_test

// Conformance cases for the metadata a write carries (generateName,
// uid, namespace, resourceVersion, owner references, the deletion
// fields) and for malformed writes. Each was found by a review and
// failed on the fake when it was written; the comment on each says what
// kube-apiserver answers, and what the fake answered then.

import (
	"context"
	"fmt"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// configMapWithMetadata is a ConfigMap with the metadata given, whole.
func configMapWithMetadata(metadata map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
}

// A generateName is itself validated, as a prefix of a name of its
// resource, on every write, whether or not a name is given:
// kube-apiserver's ValidateObjectMeta answers 422 with a cause
// metadata.generateName. The fake never looks at it: "a." makes the
// valid name "a.xxxxx" and is 201 there, as is a bad generateName beside
// a good name, and a merge patch that sets one is 200.
func TestConformanceGenerateNameIsValidated(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"generateName": "a."}))
		rec.add("create, generateName a.: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6gn", "generateName": "Bad_"}))
		rec.add("create, name r6gn, generateName Bad_: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"generateName": "Gen-"}))
		rec.add("create, generateName Gen-: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6gn2"}))
		rec.add("create r6gn2: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r6gn2", merge, map[string]any{"metadata": map[string]any{"generateName": "a."}})
		rec.add("patch generateName a.: %s %s", outcome(code, obj), causesOf(obj))
		crd, ccol := edgeCRD(ctx, t, tg, "r6gen.edges.listwatch.dev")
		cr := edgeObj(crd, "v1", "")
		cr["metadata"] = map[string]any{"generateName": "a."}
		code, obj = tg.do(ctx, t, "POST", ccol, "", cr)
		rec.add("custom resource, generateName a.: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// A merge patch that removes metadata.uid, as one computed by diffing a
// desired object built from scratch against the live one does
// (jsonpatch.CreateMergePatch gives "uid": null): kube-apiserver's
// BeforeUpdate takes the stored uid for an object that has none, and the
// patch is 200. The fake compares the empty uid with the stored one and
// answers 422 (patch.go).
func TestConformancePatchThatRemovesTheUID(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6uid"}))
		rec.add("create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r6uid", merge, map[string]any{"metadata": map[string]any{"uid": nil, "resourceVersion": nil, "creationTimestamp": nil}, "data": map[string]any{"k": "v"}})
		rec.add("configmap, patch uid, resourceVersion and creationTimestamp null: %s %s", outcome(code, obj), causesOf(obj))
		crd, ccol := edgeCRD(ctx, t, tg, "r6uid.edges.listwatch.dev")
		code, obj = tg.do(ctx, t, "POST", ccol, "", edgeObj(crd, "v1", "a"))
		rec.add("create custom: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, ccol+"/a", merge, map[string]any{"metadata": map[string]any{"uid": nil}, "spec": map[string]any{"n": int64(2)}})
		rec.add("custom, patch uid null: %s %s", outcome(code, obj), causesOf(obj))
	})
}

// A merge patch that changes metadata.uid and carries a stale
// resourceVersion: kube-apiserver's store refuses the stale
// resourceVersion (409) before validation finds the uid changed (422).
// The fake judges the uid first, outside updateLocked (patch.go).
func TestConformancePatchOfTheUIDAtAStaleResourceVersion(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		_, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6uidrv"}))
		stale := meta(obj, "resourceVersion")
		_, obj = tg.patch(ctx, t, col+"/r6uidrv", merge, map[string]any{"data": map[string]any{"x": "1"}})
		rec.add("moved on: %s", newer(stale, meta(obj, "resourceVersion")))
		code, obj := tg.patch(ctx, t, col+"/r6uidrv", merge, map[string]any{"metadata": map[string]any{"uid": "00000000-0000-0000-0000-000000000000", "resourceVersion": stale}})
		rec.add("patch another uid at a stale rv: %s", outcome(code, obj))
	})
}

// A merge patch that removes a namespaced object's metadata.namespace:
// kube-apiserver's name check passes an object with no namespace, and
// BeforeUpdate fills in the request's; 200, no change. The fake answers
// 400 (patch.go: the patched namespace must equal the URL's).
func TestConformancePatchThatRemovesTheNamespace(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6nons"}))
		rec.add("create: %s", outcome(code, obj))
		rv := meta(obj, "resourceVersion")
		code, obj = tg.patch(ctx, t, col+"/r6nons", merge, map[string]any{"metadata": map[string]any{"namespace": nil}})
		rec.add("patch namespace null: %s, %s", outcome(code, obj), newer(rv, meta(obj, "resourceVersion")))
	})
}

// A merge patch that gives a cluster-scoped object (a custom resource,
// a Namespace) a metadata.namespace: kube-apiserver's BeforeUpdate clears
// it, as the scope wants; 200, the object without a namespace. The fake
// keeps it, and updateLocked then looks the object up under that
// namespace, finds none and, the body carrying the stored uid, answers
// 409 Conflict as for a uid precondition (patch.go, objects.go).
func TestConformancePatchGivesAClusterScopedObjectANamespace(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd := fakeapiserver.CRD{Group: "r6cluster.edges.listwatch.dev", Version: "v1", Kind: "Pin", Plural: "pins", ClusterScoped: true}
		tg.installCRD(ctx, crd)
		t.Cleanup(func() { tg.deleteCRD(context.Background(), crd) })
		col := "/apis/" + crd.Group + "/v1/pins"
		waitFor(ctx, t, func() bool {
			code, s := tg.watch(ctx, t, col+"?watch=true&timeoutSeconds=1")
			if s != nil {
				s.cancel()
			}
			return code == 200
		})
		code, obj := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		rec.add("create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"metadata": map[string]any{"namespace": "default"}, "spec": map[string]any{"n": int64(3)}})
		rec.add("custom, patch namespace default: %s, namespace %q", outcome(code, obj), meta(obj, "namespace"))
		// A generated name: kube-apiserver keeps a deleted Namespace
		// (Terminating, no namespace controller to finish it), so a fixed
		// name would be taken on the script's next run against it.
		code, obj = tg.do(ctx, t, "POST", "/api/v1/namespaces", "", map[string]any{"metadata": map[string]any{"generateName": "r6clusterns-"}})
		rec.add("create namespace: %s", outcome(code, obj))
		ns := meta(obj, "name")
		defer tg.do(ctx, t, "DELETE", "/api/v1/namespaces/"+ns, "", nil)
		code, obj = tg.patch(ctx, t, "/api/v1/namespaces/"+ns, merge, map[string]any{"metadata": map[string]any{"namespace": "default", "labels": map[string]any{"p": "1"}}})
		rec.add("namespace, patch namespace default: %s, namespace %q", outcome(code, obj), meta(obj, "namespace"))
	})
}

// A create whose body carries resourceVersion "0" or one that is no
// number: etcd's store refuses only a resourceVersion that parses to a
// number other than 0 (ObjectResourceVersion's error is ignored), so
// kube-apiserver creates both (201). The fake refuses any non-empty
// resourceVersion with its 500 (objects.go createLocked), which doc.go
// promises "as etcd's store answers".
func TestConformanceCreateWithAResourceVersionThatIsZeroOrNoNumber(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		for _, c := range []struct{ name, rv string }{{"r6rvzero", "0"}, {"r6rvabc", "abc"}} {
			code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": c.name, "resourceVersion": c.rv}))
			rec.add("create with resourceVersion %q: %s", c.rv, outcome(code, obj))
		}
	})
}

// An update or merge patch whose resourceVersion is "0" or no number:
// kube-apiserver's store parses it; "0" is no resourceVersion at all (an
// unconditional update of a ConfigMap, 200; refused for a Lease or a
// custom resource, 422 "must be specified"), and "abc" is the parse
// error's 500. The fake compares the strings with the stored
// resourceVersion and answers 409 Conflict for each (objects.go
// updateLocked).
func TestConformanceUpdateWithAResourceVersionThatIsZeroOrNoNumber(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6rvupd"}))
		rec.add("create: %s", outcome(code, obj))
		for _, rv := range []string{"0", "abc"} {
			put := configMapWithMetadata(map[string]any{"name": "r6rvupd", "resourceVersion": rv})
			put["data"] = map[string]any{"put": rv}
			code, obj = tg.do(ctx, t, "PUT", col+"/r6rvupd", "", put)
			rec.add("configmap, PUT with resourceVersion %q: %s", rv, outcome(code, obj))
			code, obj = tg.patch(ctx, t, col+"/r6rvupd", merge, map[string]any{"metadata": map[string]any{"resourceVersion": rv}, "data": map[string]any{"patch": rv}})
			rec.add("configmap, patch with resourceVersion %q: %s", rv, outcome(code, obj))
		}
		_, obj = tg.do(ctx, t, "GET", col+"/r6rvupd", "", nil)
		rec.add("configmap data now: %v", obj["data"])
		lcol := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		code, obj = tg.do(ctx, t, "PUT", lcol+"/r6rv", "", lease("r6rv", "x"))
		rec.add("lease create: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "PUT", lcol+"/r6rv", "", setMeta(lease("r6rv", "y"), "resourceVersion", "0"))
		rec.add("lease, PUT with resourceVersion \"0\": %s %s", outcome(code, obj), causesOf(obj))
		crd, ccol := edgeCRD(ctx, t, tg, "r6rv.edges.listwatch.dev")
		code, obj = tg.do(ctx, t, "POST", ccol, "", edgeObj(crd, "v1", "a"))
		rec.add("custom create: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "PUT", ccol+"/a", "", setMeta(edgeObj(crd, "v1", "a"), "resourceVersion", "0"))
		rec.add("custom, PUT with resourceVersion \"0\": %s %s", outcome(code, obj), causesOf(obj))
	})
}

// A merge patch whose body is JSON null: kube-apiserver's merge patch
// answers 400 BadRequest; the fake unmarshals null into a nil map, a
// patch of nothing, and answers 200 (patch.go servePatch).
func TestConformanceMergePatchOfNull(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6null"}))
		rec.add("create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r6null", merge, nil)
		rec.add("patch null: %s", outcome(code, obj))
	})
}

// A generateName whose generated name is already taken: kube-apiserver's
// names are a random suffix of consonants and digits (never 0 or 1) and
// it generates again on a conflict, so the create is 201. The fake's
// suffixes are a counter in hex ("00001", "00002", ...), deterministic
// and checked against nothing, so objects a client named itself (a
// mirror of objects generated elsewhere, say) make its create 409
// AlreadyExists (objects.go createLocked, names.go).
func TestConformanceGenerateNameBesideTakenNames(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		for i := 1; i <= 8; i++ {
			code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": fmt.Sprintf("r6g-%05x", i)}))
			rec.add("create r6g-%05x: %s", i, outcome(code, obj))
		}
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"generateName": "r6g-"}))
		rec.add("create, generateName r6g-: %s", outcome(code, obj))
	})
}

// A write to a namespaced resource's all-namespaces path, as a dynamic
// client without .Namespace(ns) sends it: kube-apiserver serves only
// LIST and WATCH there, 405 MethodNotAllowed. The fake routes the POST
// to a create in namespace "", then answers 404 (the namespace "" is not
// found) or, when the body names a namespace, 400 (route.go, handlers.go).
func TestConformanceCreateAtTheAllNamespacesPath(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		code, obj := tg.do(ctx, t, "POST", "/api/v1/configmaps", "", configMapWithMetadata(map[string]any{"name": "r6allns"}))
		rec.add("POST /api/v1/configmaps: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", "/api/v1/configmaps", "", configMapWithMetadata(map[string]any{"name": "r6allns", "namespace": tg.namespace}))
		rec.add("POST /api/v1/configmaps, namespace in the body: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", "/apis/coordination.k8s.io/v1/leases", "", lease("r6allns", "x"))
		rec.add("POST /apis/coordination.k8s.io/v1/leases: %s", outcome(code, obj))
	})
}

// A custom resource whose metadata has fields of the wrong type (a
// label value that is a number or null, an annotation that is a bool, a
// name that is a number): kube-apiserver decodes a custom resource's
// metadata as ObjectMeta, so each is 400 BadRequest but the null label,
// stored as "". The fake keeps the body whole and judges what its
// accessors can read: it stores {"a": 1}, {"a": null} and {"a": true}
// (201), objects a typed client cannot decode, and finds no name in 5
// (422) (decode.go decodeBody).
func TestConformanceCustomResourceMetadataOfTheWrongType(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, col := edgeCRD(ctx, t, tg, "r6metatype.edges.listwatch.dev")
		for _, c := range []struct {
			what string
			meta map[string]any
		}{
			{"label value 1", map[string]any{"name": "l1", "labels": map[string]any{"a": int64(1)}}},
			{"label value null", map[string]any{"name": "l2", "labels": map[string]any{"a": nil}}},
			{"annotation true", map[string]any{"name": "a1", "annotations": map[string]any{"a": true}}},
			{"name 5", map[string]any{"name": int64(5)}},
		} {
			cr := edgeObj(crd, "v1", "")
			cr["metadata"] = c.meta
			code, obj := tg.do(ctx, t, "POST", col, "", cr)
			m, _ := obj["metadata"].(map[string]any)
			rec.add("create, %s: %s, labels %v, annotations %v", c.what, outcome(code, obj), m["labels"], m["annotations"])
		}
	})
}

// A Lease created by a PUT whose resourceVersion is no number:
// kube-apiserver's store parses the body's resourceVersion before it
// decides to create, and answers the parse error's 500. The fake clears
// any resourceVersion on that path and creates (201) (objects.go
// updateLocked).
func TestConformanceLeaseCreatedByAPutAtAResourceVersionThatIsNoNumber(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		lcol := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		code, obj := tg.do(ctx, t, "PUT", lcol+"/r6rvabc", "", setMeta(lease("r6rvabc", "x"), "resourceVersion", "abc"))
		rec.add("PUT to a missing Lease with resourceVersion \"abc\": %s", outcome(code, obj))
	})
}

// metadata.deletionGracePeriodSeconds is the system's: kube-apiserver's
// create wipes it (WipeObjectMetaSystemFields) and an update may not
// change it (422, immutable), as doc.go says of deletionTimestamp. The
// fake stores it as sent on a create and on a merge patch (objects.go
// createLocked, updateLocked).
func TestConformanceDeletionGracePeriodSecondsIsTheSystems(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6grace", "deletionGracePeriodSeconds": int64(30)}))
		m, _ := obj["metadata"].(map[string]any)
		rec.add("create with deletionGracePeriodSeconds 30: %s, stored %v", outcome(code, obj), m["deletionGracePeriodSeconds"])
		code, obj = tg.patch(ctx, t, col+"/r6grace", merge, map[string]any{"metadata": map[string]any{"deletionGracePeriodSeconds": int64(10)}})
		m, _ = obj["metadata"].(map[string]any)
		rec.add("patch deletionGracePeriodSeconds 10: %s %s, stored %v", outcome(code, obj), causesOf(obj), m["deletionGracePeriodSeconds"])
	})
}

// Owner references that repeat one uid: kube-apiserver's create and
// update handlers keep one of each that repeats whole (with a warning),
// so the stored object has a single reference; two of one uid that
// differ elsewhere are both kept. The fake stores both, and a client that
// walks a child's owners (a garbage collector, examples/04-controller)
// sees the owner twice (handlers.go, patch.go: no dedup).
func TestConformanceDuplicateOwnerReferencesAreDeduplicated(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		ref := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "00000000-0000-0000-0000-0000000000aa"}
		refsOf := func(obj map[string]any) int {
			m, _ := obj["metadata"].(map[string]any)
			refs, _ := m["ownerReferences"].([]any)
			return len(refs)
		}
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6dup", "ownerReferences": []any{ref, ref}}))
		rec.add("create with one owner reference twice: %s, stored %d", outcome(code, obj), refsOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "r6dup2"}))
		rec.add("create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/r6dup2", merge, map[string]any{"metadata": map[string]any{"ownerReferences": []any{ref, ref}}})
		rec.add("patch one owner reference twice: %s, stored %d", outcome(code, obj), refsOf(obj))
		other := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": ref["uid"]}
		code, obj = tg.patch(ctx, t, col+"/r6dup2", merge, map[string]any{"metadata": map[string]any{"ownerReferences": []any{ref, other, ref}}})
		rec.add("patch two owner references of one uid, the first twice: %s, stored %d", outcome(code, obj), refsOf(obj))
	})
}

// A create with several faults validation finds: kube-apiserver's
// ValidateObjectMeta answers one 422 with every cause, in its order
// (name, then labels). The fake stops at the first it finds (objects.go
// createLocked: the name check returns before the labels are read).
// conformance_typeorder_test.go disclaims this for an update only.
func TestConformanceCreateWithSeveralValidationFaults(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		bad := map[string]any{"a": "-bad-"}
		code, obj := tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"labels": bad, "resourceVersion": "12345"}))
		rec.add("no name, bad label, rv: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", configMapWithMetadata(map[string]any{"name": "Bad_Name", "labels": bad}))
		rec.add("bad name, bad label: %s %s", outcome(code, obj), causesOf(obj))
	})
}
