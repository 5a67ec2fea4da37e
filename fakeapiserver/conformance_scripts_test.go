package fakeapiserver_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

func cm(name string, labels map[string]any, data map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
}

func meta(obj map[string]any, field string) string {
	m, _ := obj["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}

func setMeta(obj map[string]any, field, value string) map[string]any {
	obj["metadata"].(map[string]any)[field] = value
	return obj
}

// newer says how resourceVersion b relates to a: the values differ
// between servers, the relation must not.
func newer(a, b string) string {
	switch {
	case a == b:
		return "same rv"
	case len(a) < len(b) || (len(a) == len(b) && a < b):
		return "newer rv"
	}
	return "older rv"
}

func TestConformance(t *testing.T) {
	cp := testenv.Shared(t)
	t.Run("ConfigMapWrites", func(t *testing.T) { conform(t, cp, configMapWrites) })
	t.Run("LeaseWrites", func(t *testing.T) { conform(t, cp, leaseWrites) })
	t.Run("LeaseWritesInProtobuf", func(t *testing.T) { conform(t, cp, leaseWritesInProtobuf) })
	t.Run("PagingAndSelectors", func(t *testing.T) { conform(t, cp, pagingAndSelectors) })
	t.Run("WatchEvents", func(t *testing.T) { conform(t, cp, watchEvents) })
	t.Run("StreamedList", func(t *testing.T) { conform(t, cp, streamedList) })
	t.Run("BookmarksAndTimeout", func(t *testing.T) { conform(t, cp, bookmarksAndTimeout) })
	t.Run("Encodings", func(t *testing.T) { conform(t, cp, encodings) })
	t.Run("CustomResourcesComeAndGo", func(t *testing.T) { conform(t, cp, customResources) })
	t.Run("MergePatches", func(t *testing.T) { conform(t, cp, mergePatches) })
	t.Run("SecretStringData", func(t *testing.T) { conform(t, cp, secretStringData) })
}

func configMapWrites(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	code, a := tg.do(ctx, t, "POST", col, "", cm("a", nil, map[string]any{"k": "1"}))
	rec.add("create a: %s", outcome(code, a))
	code, obj := tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
	rec.add("create a again: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"/a", "", nil)
	rec.add("get a: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"/nope", "", nil)
	rec.add("get missing: %s", outcome(code, obj))

	b := setMeta(cm("a", nil, map[string]any{"k": "2"}), "resourceVersion", meta(a, "resourceVersion"))
	code, a2 := tg.do(ctx, t, "PUT", col+"/a", "", b)
	rec.add("update a at its rv: %s, %s", outcome(code, a2), newer(meta(a, "resourceVersion"), meta(a2, "resourceVersion")))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", b)
	rec.add("update a at a stale rv: %s", outcome(code, obj))
	same := setMeta(cm("a", nil, map[string]any{"k": "2"}), "resourceVersion", meta(a2, "resourceVersion"))
	code, a3 := tg.do(ctx, t, "PUT", col+"/a", "", same)
	rec.add("update a changing nothing: %s, %s", outcome(code, a3), newer(meta(a2, "resourceVersion"), meta(a3, "resourceVersion")))
	code, a4 := tg.do(ctx, t, "PUT", col+"/a", "", cm("a", nil, map[string]any{"k": "3"}))
	rec.add("update a without rv: %s, %s", outcome(code, a4), newer(meta(a3, "resourceVersion"), meta(a4, "resourceVersion")))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", setMeta(cm("a", nil, map[string]any{"k": "4"}), "uid", "00000000-0000-0000-0000-000000000001"))
	rec.add("update a with another uid: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/missing", "", cm("missing", nil, nil))
	rec.add("update missing: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", cm("b", nil, nil))
	rec.add("update a with name b: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "POST", "/api/v1/namespaces/no-such-namespace/configmaps", "", cm("x", nil, nil))
	rec.add("create in a missing namespace: %s %v", outcome(code, obj), obj["details"])
	code, obj = tg.do(ctx, t, "POST", col, "", cm("Not_A_Name", nil, nil))
	rec.add("create with an invalid name: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "POST", col, "", cm("dots.are-fine", nil, nil))
	rec.add("create with a DNS subdomain name: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "POST", col, "", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "gen-"}})
	rec.add("create with generateName: %s, prefix kept %v", outcome(code, obj), strings.HasPrefix(meta(obj, "name"), "gen-"))
	code, obj = tg.do(ctx, t, "POST", col, "", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": strings.Repeat("g", 70) + "-"}})
	rec.add("create with a 71-character generateName: %s, a name of %d characters", outcome(code, obj), len(meta(obj, "name")))

	del := func(pre map[string]any) (int, map[string]any) {
		return tg.do(ctx, t, "DELETE", col+"/a", "", map[string]any{"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": pre})
	}
	code, obj = del(map[string]any{"resourceVersion": meta(a, "resourceVersion")})
	rec.add("delete a at a stale rv: %s", outcome(code, obj))
	code, obj = del(map[string]any{"uid": "00000000-0000-0000-0000-000000000001"})
	rec.add("delete a with another uid: %s", outcome(code, obj))
	code, obj = del(map[string]any{"uid": meta(a, "uid"), "resourceVersion": meta(a4, "resourceVersion")})
	rec.add("delete a: %s %v", outcome(code, obj), obj["status"])
	code, obj = del(nil)
	rec.add("delete a again: %s", outcome(code, obj))
}

// secretStringData: a Secret's stringData is write-only; each key lands
// in data, over data's own, and the field is never stored or returned;
// its type defaults to Opaque.
func secretStringData(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/secrets"
	secret := func(data map[string]any, stringData map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": data, "stringData": stringData}
	}
	describe := func(obj map[string]any) string {
		data, _ := obj["data"].(map[string]any)
		var keys []string
		for k, v := range data {
			b, _ := base64.StdEncoding.DecodeString(v.(string))
			keys = append(keys, k+"="+string(b))
		}
		sort.Strings(keys)
		_, kept := obj["stringData"]
		return fmt.Sprintf("data %v, stringData returned %v, type %v", keys, kept, obj["type"])
	}
	code, s := tg.do(ctx, t, "POST", col, "", secret(map[string]any{"a": "MQ==", "b": "Mg=="}, map[string]any{"b": "two", "c": "3"}))
	rec.add("create with data and stringData: %s, %s", outcome(code, s), describe(s))
	code, obj := tg.do(ctx, t, "GET", col+"/s", "", nil)
	rec.add("get: %s, %s", outcome(code, obj), describe(obj))
	update := secret(obj["data"].(map[string]any), map[string]any{"a": "one"})
	setMeta(update, "resourceVersion", meta(obj, "resourceVersion"))
	code, obj = tg.do(ctx, t, "PUT", col+"/s", "", update)
	rec.add("update with stringData: %s, %s", outcome(code, obj), describe(obj))
}

func lease(name string, holder string) map[string]any {
	return map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"holderIdentity": holder}}
}

func leaseWrites(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/apis/coordination.k8s.io/v1/namespaces/" + tg.namespace + "/leases"
	code, l := tg.do(ctx, t, "PUT", col+"/a", "", lease("a", "x"))
	rec.add("PUT to a missing Lease: %s", outcome(code, l))
	code, obj := tg.do(ctx, t, "PUT", col+"/b", "", setMeta(lease("b", "x"), "resourceVersion", "12345"))
	rec.add("PUT to a missing Lease with a resourceVersion: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/Member_X", "", lease("Member_X", "x"))
	rec.add("PUT to a missing Lease with an invalid name: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/c", "", setMeta(lease("c", "x"), "uid", "00000000-0000-0000-0000-000000000001"))
	rec.add("PUT to a missing Lease with a uid: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "POST", col, "", lease("a", "y"))
	rec.add("create existing Lease: %s", outcome(code, obj))
	taken := setMeta(lease("a", "y"), "resourceVersion", meta(l, "resourceVersion"))
	setMeta(taken, "uid", meta(l, "uid"))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", taken)
	rec.add("guarded takeover: %s holder %v", outcome(code, obj), obj["spec"].(map[string]any)["holderIdentity"])
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", taken)
	rec.add("guarded takeover at a stale rv: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "DELETE", col+"/a", "", nil)
	rec.add("delete Lease: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", taken)
	rec.add("guarded takeover of a deleted Lease (uid in body): %s", outcome(code, obj))
	delete(taken["metadata"].(map[string]any), "uid")
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", taken)
	rec.add("guarded takeover of a deleted Lease (rv only): %s", outcome(code, obj))
}

func pagingAndSelectors(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	for i, name := range []string{"e", "b", "d", "a", "c"} {
		code, _ := tg.do(ctx, t, "POST", col, "", cm(name, map[string]any{"parity": fmt.Sprint(i % 2)}, nil))
		require.Equal(t, 201, code)
	}
	names := func(list map[string]any) []string {
		var out []string
		items, _ := list["items"].([]any)
		for _, it := range items {
			out = append(out, meta(it.(map[string]any), "name"))
		}
		return out
	}
	code, p1 := tg.do(ctx, t, "GET", col+"?limit=2", "", nil)
	rec.add("page 1: %s %v remaining=%v continue=%v", outcome(code, p1), names(p1),
		p1["metadata"].(map[string]any)["remainingItemCount"], meta(p1, "continue") != "")
	_, _ = tg.do(ctx, t, "POST", col, "", cm("aa", nil, nil)) // after the first page: not in this list
	code, p2 := tg.do(ctx, t, "GET", col+"?limit=2&continue="+url.QueryEscape(meta(p1, "continue")), "", nil)
	rec.add("page 2: %s %v %s", outcome(code, p2), names(p2), newer(meta(p1, "resourceVersion"), meta(p2, "resourceVersion")))
	code, p3 := tg.do(ctx, t, "GET", col+"?limit=2&continue="+url.QueryEscape(meta(p2, "continue")), "", nil)
	rec.add("page 3: %s %v continue=%v", outcome(code, p3), names(p3), meta(p3, "continue") != "")
	code, obj := tg.do(ctx, t, "GET", col+"?labelSelector=parity%3D1", "", nil)
	rec.add("parity=1: %s %v", outcome(code, obj), names(obj))
	code, obj = tg.do(ctx, t, "GET", col+"?labelSelector=parity+notin+(0),parity", "", nil)
	rec.add("parity notin (0): %s %v", outcome(code, obj), names(obj))
	code, obj = tg.do(ctx, t, "GET", col+"?labelSelector=parity%3D0&limit=1", "", nil)
	rec.add("parity=0, limit 1: %s %v continue=%v", outcome(code, obj), names(obj), meta(obj, "continue") != "")
	code, obj = tg.do(ctx, t, "GET", col+"?fieldSelector=metadata.name%3Dc", "", nil)
	rec.add("name=c: %s %v", outcome(code, obj), names(obj))
	code, obj = tg.do(ctx, t, "GET", col+"?fieldSelector=metadata.namespace%3D"+tg.namespace+",metadata.name!%3Dc", "", nil)
	rec.add("namespace, name!=c: %s %v", outcome(code, obj), names(obj))
	code, obj = tg.do(ctx, t, "GET", col+"?fieldSelector=spec.foo%3Dc", "", nil)
	rec.add("unsupported field: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?labelSelector=parity+in+(", "", nil)
	rec.add("bad label selector: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?continue=garbage", "", nil)
	rec.add("bad continue: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersion=999999999&resourceVersionMatch=NotOlderThan", "", nil)
	rec.add("list from the future: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersionMatch=Exact", "", nil)
	rec.add("match without rv: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3D"+tg.namespace+"&labelSelector=parity%3D1", "", nil)
	rec.add("all namespaces, filtered: %s %v", outcome(code, obj), names(obj))
}

func watchEvents(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, _ = tg.do(ctx, t, "POST", col, "", cm("b", map[string]any{"app": "x"}, nil))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("a", map[string]any{"app": "x"}, nil))
	_, list := tg.do(ctx, t, "GET", col, "", nil)
	rv := meta(list, "resourceVersion")

	code, all := tg.watch(ctx, t, col+"?watch=true&resourceVersion="+rv)
	rec.add("watch from the list: %d", code)
	code, sel := tg.watch(ctx, t, col+"?watch=true&labelSelector=app%3Dx&resourceVersion="+rv)
	rec.add("watch app=x: %d", code)
	_, _ = tg.do(ctx, t, "POST", col, "", cm("c", nil, nil))
	_, _ = tg.do(ctx, t, "PUT", col+"/a", "", cm("a", map[string]any{"app": "y"}, nil))
	_, _ = tg.do(ctx, t, "PUT", col+"/a", "", cm("a", map[string]any{"app": "x"}, map[string]any{"k": "v"}))
	_, _ = tg.do(ctx, t, "DELETE", col+"/b", "", nil)
	for range 4 {
		rec.add("all: %s", all.next(t))
	}
	for range 3 {
		rec.add("app=x: %s", sel.next(t))
	}
	all.cancel()
	sel.cancel()

	code, zero := tg.watch(ctx, t, col+"?watch=true&resourceVersion=0")
	rec.add("watch from 0: %d", code)
	for range 2 {
		rec.add("from 0: %s", zero.next(t))
	}
	zero.cancel()
	code, unset := tg.watch(ctx, t, col+"?watch=true")
	rec.add("watch unset: %d", code)
	for range 2 {
		rec.add("unset: %s", unset.next(t))
	}
	unset.cancel()
	code, obj := tg.do(ctx, t, "GET", col+"?watch=true&resourceVersionMatch=NotOlderThan", "", nil)
	rec.add("watch with a match but no sendInitialEvents: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?watch=true&resourceVersion=abc", "", nil)
	rec.add("watch from a resourceVersion that is not one: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersion=abc", "", nil)
	rec.add("list at a resourceVersion that is not one: %s", outcome(code, obj))
}

func streamedList(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, _ = tg.do(ctx, t, "POST", col, "", cm("b", nil, nil))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
	code, s := tg.watch(ctx, t, col+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	rec.add("streamed list: %d", code)
	events := []string{s.next(t), s.next(t)}
	slicesSort(events) // the watch cache sends initial events in its own order
	rec.add("initial: %v", events)
	rec.add("then: %s", s.next(t))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("c", nil, nil))
	rec.add("live: %s", skipBookmarks(t, s))
	s.cancel()
	code, obj := tg.do(ctx, t, "GET", col+"?watch=true&sendInitialEvents=true", "", nil)
	rec.add("without resourceVersionMatch: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=1", "", nil)
	rec.add("on a LIST: %s", outcome(code, obj))
}

func skipBookmarks(t *testing.T, s *stream) string {
	for {
		if ev := s.next(t); ev != "BOOKMARK" {
			return ev
		}
	}
}

func slicesSort(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// With timeoutSeconds=5, kube-apiserver's watch cache sends a bookmark 2
// s before the end (one or two: it looks every second, jittered), and the
// watch ends; but only if its resourceVersion has moved past where the
// watch started. Bookmarks are compared as present or not, on the watch
// whose start the script's own write moved past; on the one from the
// latest write, only its other events: whether the real server's
// resourceVersion moves in those 5 s depends on writes elsewhere in a
// shared control plane (a loaded make test-loaded saw a bookmark there,
// the fake, with nothing else writing, none).
func bookmarksAndTimeout(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, list := tg.do(ctx, t, "GET", col, "", nil)
	code, moved := tg.watch(ctx, t, col+"?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&labelSelector=app%3Dx&resourceVersion="+meta(list, "resourceVersion"))
	rec.add("watch app=x: %d", code)
	_, w := tg.do(ctx, t, "POST", col, "", cm("unlabelled", nil, nil))
	code, idle := tg.watch(ctx, t, col+"?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion="+meta(w, "resourceVersion"))
	rec.add("watch from the latest write: %d", code)
	for _, s := range []*stream{moved, idle} {
		var got []string
		for ev := s.next(t); ev != "end"; ev = s.next(t) {
			// How many: the watch cache checks every second (jittered)
			// and may send one more in the second it is due.
			if s == idle && ev == "BOOKMARK" {
				continue
			}
			if ev != "BOOKMARK" || len(got) == 0 || got[len(got)-1] != ev {
				got = append(got, ev)
			}
		}
		rec.add("before the end: %v", got)
	}
	code, s := tg.watch(ctx, t, col+"?watch=true&timeoutSeconds=3&resourceVersion="+meta(list, "resourceVersion"))
	rec.add("watch without bookmarks: %d, then %s, %s", code, s.next(t), s.next(t))
}

func encodings(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, _ = tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
	for _, accept := range []string{
		"application/vnd.kubernetes.protobuf",
		"application/vnd.kubernetes.protobuf,application/json",
		"application/json",
		"*/*",
		"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
	} {
		code, ct, body := tg.doRaw(ctx, t, "GET", col, accept, nil)
		rec.add("list, Accept %s: %d %s protobuf=%v", accept, code, ct, strings.HasPrefix(string(body), "k8s\x00"))
	}
	code, ct, body := tg.doRaw(ctx, t, "GET", col+"/a", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", nil)
	rec.add("get metadata only: %d %s %v", code, ct, strings.Contains(string(body), `"kind":"PartialObjectMetadata"`))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("doomed", nil, nil))
	metadataInProtobuf(ctx, t, tg, rec, col, "doomed")
	code, ct, _ = tg.doRaw(ctx, t, "GET", col+"/a", "text/plain", nil)
	rec.add("get as text: %d %s", code, ct)
	code, ct, body = tg.doRaw(ctx, t, "GET", col+"/missing", "application/vnd.kubernetes.protobuf", nil)
	rec.add("missing, in protobuf: %d %s protobuf=%v", code, ct, strings.HasPrefix(string(body), "k8s\x00"))
}

func customResources(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	crd := fakeapiserver.CRD{Group: "sim.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}
	tg.installCRD(ctx, crd)
	groupHas := func(version string) string {
		code, obj := tg.do(ctx, t, "GET", "/apis/"+crd.Group+"/"+version, "", nil)
		var res []string
		list, _ := obj["resources"].([]any)
		for _, r := range list {
			res = append(res, fmt.Sprint(r.(map[string]any)["name"]))
		}
		return fmt.Sprintf("%d %v", code, res)
	}
	groups := func() string {
		_, obj := tg.do(ctx, t, "GET", "/apis", "", nil)
		list, _ := obj["groups"].([]any)
		for _, g := range list {
			g := g.(map[string]any)
			if g["name"] == crd.Group {
				var vs []string
				for _, v := range g["versions"].([]any) {
					vs = append(vs, fmt.Sprint(v.(map[string]any)["version"]))
				}
				return fmt.Sprintf("listed %v preferred %v", vs, g["preferredVersion"].(map[string]any)["version"])
			}
		}
		return "not listed"
	}
	// installCRD returns once discovery lists the resource (on the real
	// server a moment after it serves it; the fake does both at once), as
	// client-go's discovery reads it, aggregated; the legacy group
	// endpoint read here is another handler: wait for it too.
	waitFor(ctx, t, func() bool { return strings.HasPrefix(groupHas("v1"), "200") })
	rec.add("installed: %s; /apis: %s", groupHas("v1"), groups())
	col := "/apis/" + crd.Group + "/v1/namespaces/" + tg.namespace + "/widgets"
	widget := func(name, version string) map[string]any {
		return map[string]any{"apiVersion": crd.Group + "/" + version, "kind": "Widget", "metadata": map[string]any{"name": name}, "spec": map[string]any{"size": 1}}
	}
	code, w := tg.do(ctx, t, "POST", col, "", widget("a", "v1"))
	rec.add("create a: %s generation %v", outcome(code, w), w["metadata"].(map[string]any)["generation"])
	code, obj := tg.do(ctx, t, "POST", col, "", widget("Not_A_Name", "v1"))
	rec.add("create with an invalid name: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/a", "", widget("a", "v1"))
	rec.add("update without rv: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "PUT", col+"/b", "", widget("b", "v1"))
	rec.add("update missing: %s", outcome(code, obj))
	code, ct, _ := tg.doRaw(ctx, t, "GET", col, "application/vnd.kubernetes.protobuf,application/json", nil)
	rec.add("list asking protobuf first: %d %s", code, ct)
	code, ct, _ = tg.doRaw(ctx, t, "GET", col, "application/vnd.kubernetes.protobuf", nil)
	rec.add("list asking protobuf only: %d %s", code, ct)
	_, _ = tg.do(ctx, t, "POST", col, "", widget("doomed", "v1"))
	metadataInProtobuf(ctx, t, tg, rec, col, "doomed")
	code, obj = tg.do(ctx, t, "DELETE", col+"/a", "", nil)
	rec.add("delete a: %s", outcome(code, obj))
	for _, n := range []string{"a", "b"} {
		_, _ = tg.do(ctx, t, "POST", col, "", widget(n, "v1"))
	}

	// Moved to v2: the objects stay, read as v2; v1 is gone.
	// A watch from "0" starts with what the watch cache holds, which
	// learns of the writes just made a moment after each is answered:
	// one that has not yet seen the delete of a would send the old a
	// and then a's DELETED.
	cacheHolds(ctx, t, tg, col)
	code, s := tg.watch(ctx, t, col+"?watch=true&resourceVersion=0")
	rec.add("watch v1: %d %s %s", code, s.next(t), s.next(t))
	tg.moveCRD(ctx, crd, "v2")
	rec.add("watch v1 after the move: %s", skipBookmarks(t, s))
	rec.add("moved: v1 %s; v2 %s; /apis: %s", groupHas("v1"), groupHas("v2"), groups())
	col2 := "/apis/" + crd.Group + "/v2/namespaces/" + tg.namespace + "/widgets"
	code, obj = tg.do(ctx, t, "GET", col2+"/a", "", nil)
	rec.add("get a at v2: %s %v", outcome(code, obj), obj["apiVersion"])
	code, obj = tg.do(ctx, t, "GET", col+"/a", "", nil)
	rec.add("get a at v1: %s", outcome(code, obj))

	// Deleted: every object goes with a DELETED event, then the watch ends.
	code, s = tg.watch(ctx, t, col2+"?watch=true&resourceVersion=0")
	rec.add("watch v2: %d %s %s", code, s.next(t), s.next(t))
	moved := crd
	moved.Version = "v2"
	tg.deleteCRD(ctx, moved)
	var evs []string
	for ev := s.next(t); ev != "end"; ev = s.next(t) {
		if ev != "BOOKMARK" {
			evs = append(evs, ev)
		}
	}
	slicesSort(evs)
	rec.add("watch v2 after the delete: %v then end", evs)
	rec.add("deleted: v2 %s; /apis: %s", groupHas("v2"), groups())
	code, obj = tg.do(ctx, t, "GET", col2, "", nil)
	rec.add("list after the delete: %s", outcome(code, obj))
}

// With the watch cache off, as only then does compaction give 410s, and
// the scripts whose answers could depend on the cache, once more.
func TestConformanceWithoutWatchCache(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	t.Run("Compaction", func(t *testing.T) { conform(t, cp, compaction) })
	t.Run("PagingAndSelectors", func(t *testing.T) { conform(t, cp, pagingAndSelectors) })
	t.Run("WatchEvents", func(t *testing.T) { conform(t, cp, watchEvents) })
	t.Run("StreamedList", func(t *testing.T) { conform(t, cp, streamedList) })
}

func compaction(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
	_, _ = tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("b", nil, nil))
	_, page := tg.do(ctx, t, "GET", col+"?limit=1", "", nil)
	old := meta(page, "resourceVersion")
	_, _ = tg.do(ctx, t, "POST", col, "", cm("c", nil, nil))
	_, _ = tg.do(ctx, t, "POST", col, "", cm("d", nil, nil))
	tg.compact(ctx)

	code, s := tg.watch(ctx, t, col+"?watch=true&resourceVersion="+old)
	rec.add("watch from before the compaction: %d, %s, %s", code, s.next(t), s.next(t))
	code, obj := tg.do(ctx, t, "GET", col+"?limit=1&continue="+url.QueryEscape(meta(page, "continue")), "", nil)
	rec.add("continue from before the compaction: %s, new token %v", outcome(code, obj), meta(obj, "continue") != "")
	if next := meta(obj, "continue"); next != "" {
		code, obj = tg.do(ctx, t, "GET", col+"?limit=10&continue="+url.QueryEscape(next), "", nil)
		var names []string
		for _, it := range obj["items"].([]any) {
			names = append(names, meta(it.(map[string]any), "name"))
		}
		rec.add("continue with that token: %s %v", outcome(code, obj), names)
	}
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersionMatch=Exact&resourceVersion="+old, "", nil)
	rec.add("exact list from before the compaction: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?limit=5&resourceVersion="+old, "", nil)
	rec.add("paged list at an rv from before the compaction: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersionMatch=NotOlderThan&resourceVersion="+old, "", nil)
	rec.add("not-older-than list: %s", outcome(code, obj))
	code, obj = tg.do(ctx, t, "GET", col+"?limit=1&resourceVersion=0", "", nil)
	rec.add("rv=0 with a limit: %s, %d items", outcome(code, obj), len(obj["items"].([]any)))

	_, list := tg.do(ctx, t, "GET", col, "", nil)
	code, s = tg.watch(ctx, t, col+"?watch=true&resourceVersion="+meta(list, "resourceVersion"))
	_, _ = tg.do(ctx, t, "DELETE", col+"/a", "", nil)
	rec.add("watch from after the compaction: %d, %s", code, s.next(t))
	s.cancel()
	code, s = tg.watch(ctx, t, col+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=999999999")
	rec.add("streamed list from the future: %d, %s, %s", code, s.next(t), s.next(t))
}
