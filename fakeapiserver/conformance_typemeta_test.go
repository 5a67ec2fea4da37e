package fakeapiserver_test

import (
	"context"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// kube-apiserver takes a custom resource's write only in the kind and
// the group version its path serves: another apiVersion (or none) in a
// create or an update is 400 BadRequest, another kind 422 Invalid, and a
// merge patch that changes either is 422. A patch after the CRD moved to
// another version applies to the object read at the new version, so it
// is no change of apiVersion.
func TestConformanceCustomResourceTypeMetaMustMatchThePath(t *testing.T) {
	conform(t, testenv.Shared(t), customResourceTypeMeta)
}

func customResourceTypeMeta(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	crd := fakeapiserver.CRD{Group: "typemeta.listwatch.dev", Version: "v1", Kind: "Sprocket", Plural: "sprockets"}
	tg.installCRD(ctx, crd)
	col := "/apis/" + crd.Group + "/v1/namespaces/" + tg.namespace + "/sprockets"
	waitFor(ctx, t, func() bool { code, _ := tg.do(ctx, t, "GET", col, "", nil); return code == 200 })
	object := func(apiVersion, kind, name, rv string) map[string]any {
		obj := map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"n": int64(1)}}
		if apiVersion != "" {
			obj["apiVersion"] = apiVersion
		}
		if kind != "" {
			obj["kind"] = kind
		}
		if rv != "" {
			setMeta(obj, "resourceVersion", rv)
		}
		return obj
	}
	gv := crd.Group + "/v1"
	for _, c := range []struct{ what, apiVersion, kind, name string }{
		{"another kind", gv, "Gear", "k"},
		{"another version", crd.Group + "/v2", "Sprocket", "v"},
		{"another group", "other.listwatch.dev/v1", "Sprocket", "g"},
		{"no apiVersion", "", "Sprocket", "n"},
		{"its own", gv, "Sprocket", "a"},
	} {
		code, obj := tg.do(ctx, t, "POST", col, "", object(c.apiVersion, c.kind, c.name, ""))
		rec.add("create with %s: %s", c.what, outcome(code, obj))
	}
	code, obj := tg.do(ctx, t, "GET", col, "", nil)
	var names []string
	for _, it := range obj["items"].([]any) {
		names = append(names, meta(it.(map[string]any), "name"))
	}
	rec.add("list: %s %v", outcome(code, obj), names)
	_, a := tg.do(ctx, t, "GET", col+"/a", "", nil)
	rv := meta(a, "resourceVersion")
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", object(gv, "Gear", "a", rv))
	rec.add("update with another kind: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", object(crd.Group+"/v2", "Sprocket", "a", rv))
	rec.add("update with another version: %s", outcome(code, obj))
	const merge = "application/merge-patch+json"
	code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"kind": "Gear"})
	rec.add("patch of kind: %s", outcome(code, obj))
	code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"apiVersion": crd.Group + "/v2"})
	rec.add("patch of apiVersion: %s", outcome(code, obj))
	_, a = tg.do(ctx, t, "GET", col+"/a", "", nil)
	rec.add("a unchanged: %s", newer(rv, meta(a, "resourceVersion")))

	tg.moveCRD(ctx, crd, "v2")
	moved := crd
	moved.Version = "v2"
	defer tg.deleteCRD(ctx, moved)
	col2 := "/apis/" + crd.Group + "/v2/namespaces/" + tg.namespace + "/sprockets"
	code, obj = tg.patch(ctx, t, col2+"/a", merge, map[string]any{"spec": map[string]any{"n": int64(2)}})
	rec.add("patch at v2 of an object written at v1: %s %v", outcome(code, obj), obj["apiVersion"])
	code, obj = tg.do(ctx, t, "PUT", col2+"/a", "", object(gv, "Sprocket", "a", meta(obj, "resourceVersion")))
	rec.add("update at v2 with a v1 body: %s", outcome(code, obj))
}
