package fakeapiserver_test

// Conformance cases at the edges of a custom resource's life: watches
// from just before its CRD was made or moved, writes at a version its
// objects were not stored at, and writes of another kind or apiVersion
// beside the checks that come first. Each failed on the fake when an
// adversarial review wrote it, but TestConformanceStreamsAcrossAMove,
// which pins what already agreed.

import (
	"context"
	"testing"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// The helpers of these cases: a CRD's collection path, an object, a
// wait until the version is served, a watch from rv recorded.
func edgeCol(tg *target, crd fakeapiserver.CRD, version string) string {
	return "/apis/" + crd.Group + "/" + version + "/namespaces/" + tg.namespace + "/" + crd.Plural
}

func edgeObj(crd fakeapiserver.CRD, version, name string) map[string]any {
	return map[string]any{"apiVersion": crd.Group + "/" + version, "kind": crd.Kind, "metadata": map[string]any{"name": name}, "spec": map[string]any{"n": int64(1)}}
}

func awaitEdgeServed(ctx context.Context, t *testing.T, tg *target, crd fakeapiserver.CRD, version string) {
	waitFor(ctx, t, func() bool {
		code, s := tg.watch(ctx, t, edgeCol(tg, crd, version)+"?watch=true&timeoutSeconds=1")
		if s != nil {
			s.cancel()
		}
		return code == 200
	})
}

func recordEdgeWatch(ctx context.Context, t *testing.T, tg *target, rec *recorder, crd fakeapiserver.CRD, what, version, rv, name string) {
	code, s := tg.watch(ctx, t, edgeCol(tg, crd, version)+"?watch=true&allowWatchBookmarks=true&resourceVersion="+rv)
	if s == nil {
		rec.add("%s: %d", what, code)
		return
	}
	defer s.cancel()
	c, _ := tg.do(ctx, t, "POST", edgeCol(tg, crd, version), "", edgeObj(crd, version, name))
	rec.add("%s: %d, create %s: %d, %s, then %s", what, code, name, c, skipBookmarks(t, s), nextOrLive(t, s))
}

// A watch from exactly the resourceVersion a client listed just before
// the CRD moved (no write of a custom resource between): the CRD's
// update is itself a write, so the new watch cache starts past it.
func TestConformanceWatchFromTheVersionListedJustBeforeAMove(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "moveedge.edges.listwatch.dev", Version: "v1", Kind: "Bolt", Plural: "bolts"}
		tg.installCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		c, _ := tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "a"))
		rec.add("create a: %d", c)
		_, list := tg.do(ctx, t, "GET", edgeCol(tg, crd, "v1"), "", nil)
		before := meta(list, "resourceVersion")
		tg.moveCRD(ctx, crd, "v2")
		moved := crd
		moved.Version = "v2"
		defer tg.deleteCRD(ctx, moved)
		recordEdgeWatch(ctx, t, tg, rec, crd, "watch v2 from the version listed just before the move", "v2", before, "c")
	})
}

// A watch from the resourceVersion read (of another resource) just
// before the CRD was first created.
func TestConformanceWatchFromJustBeforeTheCRDWasCreated(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "installedge.edges.listwatch.dev", Version: "v1", Kind: "Nut", Plural: "nuts"}
		_, list := tg.do(ctx, t, "GET", "/api/v1/namespaces/"+tg.namespace+"/configmaps", "", nil)
		before := meta(list, "resourceVersion")
		tg.installCRD(ctx, crd)
		defer tg.deleteCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		recordEdgeWatch(ctx, t, tg, rec, crd, "watch from the version read just before the CRD was made", "v1", before, "a")
	})
}

// A watch from the resourceVersion of a list of an empty custom
// resource, after its CRD was deleted and made again.
func TestConformanceWatchFromBeforeAnEmptyCRDWasMadeAgain(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "remakeedge.edges.listwatch.dev", Version: "v1", Kind: "Washer", Plural: "washers"}
		tg.installCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		_, list := tg.do(ctx, t, "GET", edgeCol(tg, crd, "v1"), "", nil)
		before := meta(list, "resourceVersion")
		rec.add("listed %d items", len(list["items"].([]any)))
		tg.deleteCRD(ctx, crd)
		tg.installCRD(ctx, crd)
		defer tg.deleteCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		recordEdgeWatch(ctx, t, tg, rec, crd, "watch from the empty list before the CRD was made again", "v1", before, "a")
	})
}

// A merge patch that removes a custom resource's kind is 422 on
// kube-apiserver (the patched object does not decode: the patch
// handler's Invalid), 400 on the fake; one that removes its apiVersion
// is kube-apiserver's 500, the fake's 422. A create or update with no
// kind agrees (400).
func TestConformancePatchThatRemovesTypeMeta(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "tmedge.edges.listwatch.dev", Version: "v1", Kind: "Rivet", Plural: "rivets"}
		tg.installCRD(ctx, crd)
		defer tg.deleteCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		col := edgeCol(tg, crd, "v1")
		noKind := edgeObj(crd, "v1", "nk")
		delete(noKind, "kind")
		code, obj := tg.do(ctx, t, "POST", col, "", noKind)
		rec.add("create with no kind: %s", outcome(code, obj))
		code, a := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		rec.add("create a: %s", outcome(code, a))
		put := edgeObj(crd, "v1", "a")
		delete(put, "kind")
		setMeta(put, "resourceVersion", meta(a, "resourceVersion"))
		code, obj = tg.do(ctx, t, "PUT", col+"/a", "", put)
		rec.add("update with no kind: %s", outcome(code, obj))
		const merge = "application/merge-patch+json"
		for _, p := range []struct {
			what  string
			patch map[string]any
		}{
			{"kind null", map[string]any{"kind": nil}},
			{"apiVersion null", map[string]any{"apiVersion": nil}},
			{"another group", map[string]any{"apiVersion": "other.edges.listwatch.dev/v1"}},
			{"kind and version", map[string]any{"apiVersion": crd.Group + "/v2", "kind": "Gear"}},
			{"its own kind", map[string]any{"kind": "Rivet", "spec": map[string]any{"n": int64(3)}}},
		} {
			code, obj = tg.patch(ctx, t, col+"/a", merge, p.patch)
			rec.add("patch %s: %s", p.what, outcome(code, obj))
		}
	})
}

// A merge patch that changes a built-in object's kind or apiVersion is
// 422 on kube-apiserver (the patch handler's Invalid), 400 on the fake.
// (Older than this change; the same code path now sets the type meta.)
func TestConformancePatchOfABuiltInsTypeMeta(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		cms := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", cms, "", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "tmedge"}})
		rec.add("create configmap: %s", outcome(code, obj))
		defer tg.do(ctx, t, "DELETE", cms+"/tmedge", "", nil)
		for _, p := range []struct {
			what  string
			patch map[string]any
		}{
			{"configmap kind Secret", map[string]any{"kind": "Secret"}},
			{"configmap apiVersion v2", map[string]any{"apiVersion": "v2"}},
			{"configmap kind null", map[string]any{"kind": nil}},
		} {
			code, obj = tg.patch(ctx, t, cms+"/tmedge", merge, p.patch)
			rec.add("patch %s: %s", p.what, outcome(code, obj))
		}
	})
}

// A write at the new version that changes nothing, of an object stored
// at the old version: kube-apiserver reads the stored object at the
// request's version, so its generation stays, yet it writes (a newer
// resourceVersion, a MODIFIED event: the stored bytes name the old
// version). The fake bumps the generation, comparing the new version's
// object with the stored one's apiVersion; a fix that compares at the
// request's version must still write.
func TestConformanceNoChangeWriteAfterAMove(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "nochange.edges.listwatch.dev", Version: "v1", Kind: "Pin", Plural: "pins"}
		tg.installCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		_, a := tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "a"))
		_, b := tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "b"))
		tg.moveCRD(ctx, crd, "v2")
		moved := crd
		moved.Version = "v2"
		defer tg.deleteCRD(ctx, moved)
		col := edgeCol(tg, crd, "v2")
		_, list := tg.do(ctx, t, "GET", col, "", nil)
		code, s := tg.watch(ctx, t, col+"?watch=true&resourceVersion="+meta(list, "resourceVersion"))
		if s != nil {
			defer s.cancel()
		}
		rec.add("watch: %d", code)
		const merge = "application/merge-patch+json"
		code, pa := tg.patch(ctx, t, col+"/a", merge, map[string]any{"spec": map[string]any{"n": int64(1)}})
		rec.add("no-change patch at v2: %s, %s, generation %v -> %v", outcome(code, pa), newer(meta(a, "resourceVersion"), meta(pa, "resourceVersion")),
			a["metadata"].(map[string]any)["generation"], pa["metadata"].(map[string]any)["generation"])
		_, got := tg.do(ctx, t, "GET", col+"/b", "", nil)
		code, pb := tg.do(ctx, t, "PUT", col+"/b", "", got)
		rec.add("no-change update at v2: %s, %s, generation %v -> %v", outcome(code, pb), newer(meta(b, "resourceVersion"), meta(pb, "resourceVersion")),
			b["metadata"].(map[string]any)["generation"], pb["metadata"].(map[string]any)["generation"])
		if s != nil {
			rec.add("watch says: %s", nextOrLive(t, s))
			rec.add("watch says: %s", nextOrLive(t, s))
		}
		// A label patch (a sharder's) of an object stored at v1: metadata
		// only, so no new generation.
	})
}

// A metadata-only patch at the new version of an object stored at the
// old one: kube-apiserver keeps its generation.
func TestConformanceLabelPatchAfterAMoveKeepsTheGeneration(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "labelgen.edges.listwatch.dev", Version: "v1", Kind: "Cam", Plural: "cams"}
		tg.installCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		_, a := tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "a"))
		tg.moveCRD(ctx, crd, "v2")
		moved := crd
		moved.Version = "v2"
		defer tg.deleteCRD(ctx, moved)
		code, pa := tg.patch(ctx, t, edgeCol(tg, crd, "v2")+"/a", "application/merge-patch+json",
			map[string]any{"metadata": map[string]any{"labels": map[string]any{"shard": "member-1"}}})
		rec.add("label patch at v2: %s, generation %v -> %v", outcome(code, pa),
			a["metadata"].(map[string]any)["generation"], pa["metadata"].(map[string]any)["generation"])
	})
}

// Streams and cross-namespace watches from before a move.
func TestConformanceStreamsAcrossAMove(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "streams.edges.listwatch.dev", Version: "v1", Kind: "Gear", Plural: "gears"}
		tg.installCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "a"))
		_, list := tg.do(ctx, t, "GET", edgeCol(tg, crd, "v1"), "", nil)
		before := meta(list, "resourceVersion")
		tg.do(ctx, t, "POST", edgeCol(tg, crd, "v1"), "", edgeObj(crd, "v1", "b"))
		tg.moveCRD(ctx, crd, "v2")
		moved := crd
		moved.Version = "v2"
		defer tg.deleteCRD(ctx, moved)
		all := "/apis/" + crd.Group + "/v2/" + crd.Plural
		code, s := tg.watch(ctx, t, all+"?watch=true&resourceVersion="+before)
		if s != nil {
			rec.add("all namespaces from before: %d %s then %s", code, s.next(t), nextOrLive(t, s))
			s.cancel()
		} else {
			rec.add("all namespaces from before: %d", code)
		}
		code, s = tg.watch(ctx, t, edgeCol(tg, crd, "v2")+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="+before)
		if s != nil {
			rec.add("stream from before: %d %s, %s, %s", code, s.next(t), s.next(t), s.next(t))
			s.cancel()
		} else {
			rec.add("stream from before: %d", code)
		}
		code, s = tg.watch(ctx, t, edgeCol(tg, crd, "v2")+"?watch=true&resourceVersion=0")
		if s != nil {
			rec.add("watch from 0: %d %s, %s", code, s.next(t), s.next(t))
			s.cancel()
		}
		code, obj := tg.do(ctx, t, "GET", edgeCol(tg, crd, "v2")+"?resourceVersion="+before+"&resourceVersionMatch=Exact", "", nil)
		items, _ := obj["items"].([]any)
		var av []any
		for _, it := range items {
			av = append(av, it.(map[string]any)["apiVersion"])
		}
		rec.add("list exact at before: %s %d items %v", outcome(code, obj), len(items), av)
		code, obj = tg.do(ctx, t, "GET", edgeCol(tg, crd, "v2")+"?resourceVersion="+before+"&resourceVersionMatch=NotOlderThan", "", nil)
		rec.add("list not older than before: %s %s", outcome(code, obj), newer(before, meta(obj, "resourceVersion")))
	})
}

// Which comes first: a stale resourceVersion (409) or another kind or
// apiVersion (422)?
func TestConformanceStaleAndAnotherKind(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "stalekind.edges.listwatch.dev", Version: "v1", Kind: "Cog", Plural: "cogs"}
		tg.installCRD(ctx, crd)
		defer tg.deleteCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		col := edgeCol(tg, crd, "v1")
		_, a := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		stale := meta(a, "resourceVersion")
		_, a = tg.patch(ctx, t, col+"/a", "application/merge-patch+json", map[string]any{"spec": map[string]any{"n": int64(2)}})
		rec.add("moved on: %s", newer(stale, meta(a, "resourceVersion")))
		put := edgeObj(crd, "v1", "a")
		put["kind"] = "Gear"
		setMeta(put, "resourceVersion", stale)
		code, obj := tg.do(ctx, t, "PUT", col+"/a", "", put)
		rec.add("update with another kind and a stale rv: %s", outcome(code, obj))
		put["kind"] = "Cog"
		put["apiVersion"] = crd.Group + "/v2"
		code, obj = tg.do(ctx, t, "PUT", col+"/a", "", put)
		rec.add("update with another version and a stale rv: %s", outcome(code, obj))
		const merge = "application/merge-patch+json"
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"kind": "Gear", "metadata": map[string]any{"resourceVersion": stale}})
		rec.add("patch of kind with a stale rv: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"apiVersion": crd.Group + "/v2", "metadata": map[string]any{"resourceVersion": stale}})
		rec.add("patch of apiVersion with a stale rv: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"kind": "Gear", "metadata": map[string]any{"uid": "00000000-0000-0000-0000-000000000000"}})
		rec.add("patch of kind and uid: %s", outcome(code, obj))
		code, obj = tg.patch(ctx, t, col+"/a", merge, map[string]any{"apiVersion": crd.Group + "/v2", "metadata": map[string]any{"name": "b"}})
		rec.add("patch of apiVersion and name: %s", outcome(code, obj))
	})
}

// A create of another kind into a namespace that does not exist: the
// namespace's admission comes before the custom resource's validation.
func TestConformanceAnotherKindIntoAMissingNamespace(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd := fakeapiserver.CRD{Group: "nskind.edges.listwatch.dev", Version: "v1", Kind: "Cog", Plural: "cogs"}
		tg.installCRD(ctx, crd)
		defer tg.deleteCRD(ctx, crd)
		awaitEdgeServed(ctx, t, tg, crd, "v1")
		col := "/apis/" + crd.Group + "/v1/namespaces/no-such-namespace-edges/cogs"
		obj := edgeObj(crd, "v1", "a")
		code, ans := tg.do(ctx, t, "POST", col, "", obj)
		rec.add("create of its kind in a missing namespace: %s", outcome(code, ans))
		obj["kind"] = "Gear"
		code, ans = tg.do(ctx, t, "POST", col, "", obj)
		rec.add("create of another kind in a missing namespace: %s", outcome(code, ans))
	})
}
