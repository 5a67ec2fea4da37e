package fakeapiserver_test

// Conformance cases a re-review of the last metadata fixes
// (c7bbb8c..5aab573) found: each fails on the fake when written; the
// comment on each says what kube-apiserver answers, and what the fake
// answered then.

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// service is an ExternalName Service, which needs no ports and no
// cluster IP: valid as it is.
func service(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"type": "ExternalName", "externalName": "x.example.com"}}
}

// pod is a Pod with one container, valid as it is (the shared control
// plane runs without the ServiceAccount admission plugin).
func pod(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}}
}

// A Pod's update validation calls ValidateObjectMeta (ValidatePodUpdate,
// through validatePodMetadataAndSpec), so an update judges its
// generateName as on a create: "a." is 422 with a cause
// metadata.generateName. A Service's does not (ValidateServiceUpdate
// leaves ObjectMeta to ValidateObjectMetaUpdate alone), so there "a."
// is 200. The fake judged it as a path segment on every update but a
// ConfigMap's, a Secret's or a Namespace's (names.go
// updateGenerateNameErrors, since c7bbb8c) and answered 200 for both.
func TestConformanceGenerateNameOnAnUpdateOfAServiceOrAPod(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		for _, c := range []struct {
			res string
			obj map[string]any
		}{{"services", service("r14gn")}, {"pods", pod("r14gn")}} {
			col := "/api/v1/namespaces/" + tg.namespace + "/" + c.res
			code, obj := tg.do(ctx, t, "POST", col, "", c.obj)
			rec.add("%s create: %s", c.res, outcome(code, obj))
			code, obj = tg.patch(ctx, t, col+"/r14gn", merge, map[string]any{"metadata": map[string]any{"generateName": "a."}})
			rec.add("%s, patch generateName a.: %s %s", c.res, outcome(code, obj), causesOf(obj))
		}
	})
}

// A Pod's strategy sets its generation: 1 on a create, whatever was
// sent (so -1 is no fault), and one more on an update that changes its
// spec (PrepareForCreate, updatePodGeneration). The fake kept a
// built-in's generation as sent (objects.go createLocked, since
// 63816b7) and never raised it: none, then -1's 422.
func TestConformanceAPodsGenerationFollowsItsSpec(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		col := "/api/v1/namespaces/" + tg.namespace + "/pods"
		generation := func(obj map[string]any) any {
			m, _ := obj["metadata"].(map[string]any)
			return m["generation"]
		}
		code, obj := tg.do(ctx, t, "POST", col, "", pod("r14gen"))
		rec.add("create: %s, generation %v", outcome(code, obj), generation(obj))
		code, obj = tg.patch(ctx, t, col+"/r14gen", merge, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}})
		rec.add("label patch: %s, generation %v", outcome(code, obj), generation(obj))
		code, obj = tg.patch(ctx, t, col+"/r14gen", merge, map[string]any{"spec": map[string]any{"activeDeadlineSeconds": int64(100)}})
		rec.add("spec patch: %s, generation %v", outcome(code, obj), generation(obj))
		neg := pod("r14genneg")
		neg["metadata"].(map[string]any)["generation"] = int64(-1)
		code, obj = tg.do(ctx, t, "POST", col, "", neg)
		rec.add("create with generation -1: %s %s, generation %v", outcome(code, obj), causesOf(obj), generation(obj))
	})
}

// kube-apiserver applies a merge patch with evanphx/json-patch, which
// removes the nulls inside a value it sets where there was none, or
// where the old value was no object, arrays' objects included: an
// array [{"a": null, "b": 1}] is stored as [{"b": 1}]. The fake
// followed RFC 7386, whose arrays are values, kept whole (patch.go
// mergePatch), and stored the null.
func TestConformanceMergePatchDropsNullsInsideANewArray(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, col := edgeCRD(ctx, t, tg, "r14nulls.edges.listwatch.dev")
		code, obj := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		rec.add("create: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"items": []any{map[string]any{"a": nil, "b": int64(1)}, nil}}})
		rec.add("patch a new array with nulls inside: %s, spec %v", outcome(code, obj), obj["spec"])
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"items": []any{map[string]any{"c": map[string]any{"d": nil}}}}})
		rec.add("patch an array over an array: %s, spec %v", outcome(code, obj), obj["spec"])
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": []any{map[string]any{"e": nil}}})
		rec.add("patch an array over an object: %s, spec %v", outcome(code, obj), obj["spec"])
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"f": []any{map[string]any{"g": nil}}}})
		rec.add("patch an object with an array over an array: %s, spec %v", outcome(code, obj), obj["spec"])
	})
}

// A WATCH from a resourceVersion newer than the latest write: the watch
// cache opens it at once and sends only the events after that
// resourceVersion (cacheWatcher.process), so a write at an older one is
// never sent. The fake sent every write (watcher.offer), though its doc
// said such a watch waits.
func TestConformanceWatchFromAResourceVersionNotYetReached(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		_, obj := tg.do(ctx, t, "POST", col, "", cm("r14future-a", nil, nil))
		rv, err := strconv.ParseInt(meta(obj, "resourceVersion"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		code, s := tg.watch(ctx, t, fmt.Sprintf("%s?watch=true&timeoutSeconds=3&resourceVersion=%d", col, rv+1000000))
		rec.add("watch from a million writes ahead: %d", code)
		if s == nil {
			return
		}
		defer s.cancel()
		code, obj = tg.do(ctx, t, "POST", col, "", cm("r14future-b", nil, nil))
		rec.add("create b: %s", outcome(code, obj))
		rec.add("watch: %s", s.next(t))
	})
}

// apiextensions-apiserver routes a custom resource's request by verb,
// not by path shape: a PUT or a merge PATCH of its collection is an
// update or a patch without a name, 400 "name must be provided"; a
// POST to an object's path is a create of the body's object, the
// path's name unread. The fake routed them as a built-in's go-restful
// routes, 405 (route.go handler, since 3160c0b).
func TestConformanceCustomResourceVerbsAtTheOtherPath(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		crd, col := edgeCRD(ctx, t, tg, "r14routes.edges.listwatch.dev")
		code, obj := tg.do(ctx, t, "PUT", col, "", edgeObj(crd, "v1", "a"))
		rec.add("PUT the collection: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col, merge, map[string]any{"spec": map[string]any{"n": int64(2)}})
		rec.add("PATCH the collection: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", col+"/c", "", edgeObj(crd, "v1", "d"))
		rec.add("POST to c's path, d in the body: %s, name %q", outcome(code, obj), meta(obj, "name"))
		code, obj = tg.do(ctx, t, "GET", col+"/d", "", nil)
		rec.add("get d: %s", outcome(code, obj))
		cmcol := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj = tg.do(ctx, t, "PUT", cmcol, "", cm("x", nil, nil))
		rec.add("PUT the ConfigMaps: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", cmcol+"/x", "", cm("x", nil, nil))
		rec.add("POST to a ConfigMap's path: %s", outcome(code, obj))
	})
}

// A PUT that would create a Lease in a namespace that does not exist,
// its resourceVersion no number: kube-apiserver's update runs the
// mutating admission (NamespaceLifecycle, 404 for the namespace) inside
// UpdatedObject, before the store parses the resourceVersion (500).
// The fake parsed first (objects.go updateLocked: writeVersion before
// createLocked's namespace check) and answered 500.
func TestConformanceLeasePutIntoAMissingNamespaceAtAResourceVersionThatIsNoNumber(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/apis/coordination.k8s.io/v1/namespaces/no-such-namespace-r14/leases"
		code, obj := tg.do(ctx, t, "PUT", col+"/l", "", setMeta(lease("l", "x"), "resourceVersion", "abc"))
		rec.add("at resourceVersion abc: %s %v", outcome(code, obj), detailsKind(obj))
		code, obj = tg.do(ctx, t, "PUT", col+"/l", "", setMeta(lease("l", "x"), "uid", "00000000-0000-0000-0000-000000000001"))
		rec.add("with a uid: %s", outcome(code, obj))
	})
}

func detailsKind(obj map[string]any) any {
	d, _ := obj["details"].(map[string]any)
	return d["kind"]
}

// DELETE of a Pod, a Service or a Namespace: their stores return the
// deleted object (ReturnDeletedObject), not a success Status, so
// kube-apiserver answers 200 with the object. The fake answered a
// Status for every resource (handlers.go serveDelete).
func TestConformanceDeleteAnswersTheObjectWhereTheStoreReturnsIt(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		for _, c := range []struct {
			res string
			obj map[string]any
		}{
			{"pods", pod("r14del")},
			{"services", service("r14del")},
			{"configmaps", cm("r14del", nil, nil)},
			{"secrets", map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "r14del"}}},
		} {
			col := "/api/v1/namespaces/" + tg.namespace + "/" + c.res
			code, obj := tg.do(ctx, t, "POST", col, "", c.obj)
			rec.add("%s create: %s", c.res, outcome(code, obj))
			code, obj = tg.do(ctx, t, "DELETE", col+"/r14del", "", nil)
			rec.add("%s delete: %s %v", c.res, outcome(code, obj), meta(obj, "name"))
		}
		col := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
		code, obj := tg.do(ctx, t, "PUT", col+"/r14del", "", lease("r14del", "x"))
		rec.add("lease create: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "DELETE", col+"/r14del", "", nil)
		rec.add("lease delete: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "POST", "/api/v1/namespaces", "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"generateName": "r14del-"}})
		rec.add("namespace create: %s", outcome(code, obj))
		code, obj = tg.do(ctx, t, "DELETE", "/api/v1/namespaces/"+meta(obj, "name"), "", nil)
		rec.add("namespace delete: %s", outcome(code, obj))
	})
}

// A Service's name, and its generateName, is judged as a DNS label
// (RFC 1123: it may start with a digit) since RelaxedServiceNameValidation
// went GA, locked on, in v1.37 (ValidateServiceCreate). The fake judged
// it as a DNS-1035 label (names.go nameRule) and answered 422.
func TestConformanceAServiceNameMayStartWithADigit(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/services"
		code, obj := tg.do(ctx, t, "POST", col, "", service("1r14svc"))
		rec.add("create 1r14svc: %s %s", outcome(code, obj), causesOf(obj))
		gen := service("")
		gen["metadata"] = map[string]any{"generateName": "1r14-"}
		code, obj = tg.do(ctx, t, "POST", col, "", gen)
		rec.add("create with generateName 1r14-: %s %s", outcome(code, obj), causesOf(obj))
		code, obj = tg.do(ctx, t, "POST", col, "", service("r14.svc"))
		rec.add("create r14.svc: %s %s", outcome(code, obj), causesOf(obj))
	})
}
