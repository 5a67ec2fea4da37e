package fakeapiserver_test

// Conformance cases a re-review of the last round's fixes (e41002f)
// found: each fails on the fake when written; the comment on each says
// what kube-apiserver answers, and what the fake answered then.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/informer/testenv"
)

// A WATCH from the largest resourceVersions a client can send (the
// largest int64, and the largest uint64 the watch cache parses): as
// any other not yet reached, it opens and gets only the writes after
// it, none here. The fake clamped the number to the largest int64 and
// added one for its compaction check (watch.go openWatch, from+1 <
// s.compactedRV), which overflowed: an ERROR 410 Expired.
func TestConformanceWatchFromTheLargestResourceVersions(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		for _, rv := range []string{"9223372036854775807", "18446744073709551615"} {
			code, s := tg.watch(ctx, t, col+"?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion="+rv)
			if s == nil {
				rec.add("watch from %s: %d", rv, code)
				continue
			}
			c, _ := tg.do(ctx, t, "POST", col, "", cm("r15max-"+rv[:2], nil, nil))
			var evs []string
			for ev := s.next(t); ev != "end"; ev = s.next(t) {
				evs = append(evs, ev)
			}
			s.cancel()
			rec.add("watch from %s: %d, create %d, events %v", rv, code, c, evs)
		}
	})
}

// A WATCH with sendInitialEvents=false (resourceVersionMatch=
// NotOlderThan) from resourceVersion "0" or none: the watch cache
// starts at its latest resourceVersion and sends no ADDED for the
// objects already there (getAllEventsSinceLocked), only later writes.
// The fake sent one ADDED per current object, as for a watch from "0"
// without sendInitialEvents (watch.go openWatch).
//
// The watch cache learns of a write a moment after it is answered, and
// a watch opened in that moment starts before the write and sends its
// ADDED as a later event: before each watch the script waits until
// the cache holds the latest write (cacheHolds).
func TestConformanceWatchWithoutInitialEvents(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", cm("r15noinit-a", nil, nil))
		rec.add("create a: %s", outcome(code, obj))
		for i, rv := range []string{"&resourceVersion=0", ""} {
			cacheHolds(ctx, t, tg, col)
			code, s := tg.watch(ctx, t, col+"?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"+rv)
			if s == nil {
				rec.add("watch%s: %d", rv, code)
				continue
			}
			name := []string{"r15noinit-b", "r15noinit-c"}[i]
			c, _ := tg.do(ctx, t, "POST", col, "", cm(name, nil, nil))
			rec.add("watch%s: %d, create %s %d, then %s", rv, code, name, c, s.next(t))
			s.cancel()
		}
	})
}

// An update of a Pod, a Service or a Namespace through its main
// resource keeps the stored status (their strategies' PrepareForUpdate;
// a Pod's beside updatePodGeneration), and a Namespace's its
// spec.finalizers too: a merge patch that changes only those changes
// nothing, 200 at the same resourceVersion, and a PUT's status is not
// taken. (Only the patch's resourceVersion is compared: kube-apiserver
// writes the Namespace's PUT anyway, at a new one.) The fake took the
// status sent (objects.go updateLocked), at a new resourceVersion.
func TestConformanceAnUpdateKeepsTheStatusOfAPodAServiceOrANamespace(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		const merge = "application/merge-patch+json"
		for _, c := range []struct {
			res    string
			obj    map[string]any
			status map[string]any
			name   string
		}{
			{"pods", pod("r15status"), map[string]any{"phase": "Running", "message": "m"}, ""},
			{"services", service("r15status"), map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "10.0.0.1"}}}}, ""},
			{"namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"generateName": "r15status-"}},
				map[string]any{"conditions": []any{map[string]any{"type": "X", "status": "True"}}}, ""},
		} {
			col := "/api/v1/namespaces/" + tg.namespace + "/" + c.res
			if c.res == "namespaces" {
				col = "/api/v1/namespaces"
			}
			code, obj := tg.do(ctx, t, "POST", col, "", c.obj)
			c.name = meta(obj, "name")
			rec.add("%s create: %s", c.res, outcome(code, obj))
			rv := meta(obj, "resourceVersion")
			code, obj = tg.patch(ctx, t, col+"/"+c.name, merge, map[string]any{"status": c.status})
			rec.add("%s status patch: %s %s, status taken: %v", c.res, outcome(code, obj), newer(rv, meta(obj, "resourceVersion")), statusTaken(obj))
			obj["status"] = c.status
			if c.res == "namespaces" {
				obj["spec"] = map[string]any{"finalizers": []any{"example.com/f"}}
			}
			code, obj = tg.do(ctx, t, "PUT", col+"/"+c.name, "", obj)
			rec.add("%s status put: %s, status taken: %v", c.res, outcome(code, obj), statusTaken(obj))
		}
	})
}

// statusTaken: whether obj shows the status the script sent (each
// server's status on a create differs, defaulting not modelled).
func statusTaken(obj map[string]any) bool {
	st, _ := obj["status"].(map[string]any)
	lb, _ := st["loadBalancer"].(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	fin, _ := spec["finalizers"].([]any)
	return st["message"] == "m" || lb["ingress"] != nil || st["conditions"] != nil || slices.Contains(fin, "example.com/f")
}

// A DELETE of a Pod: its strategy deletes gracefully, at a grace
// period of 0 when the Pod is not scheduled (CheckGracefulDelete), so
// the store first writes it with a deletionTimestamp and
// deletionGracePeriodSeconds 0 (a MODIFIED event) and then deletes it
// (DELETED), and answers the object as deleted, both fields set. The
// fake deleted at once: one DELETED, and an answer without them
// (objects.go delete).
func TestConformanceAPodsDeleteMarksItFirst(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/pods"
		code, obj := tg.do(ctx, t, "POST", col, "", pod("r15mark"))
		rec.add("create: %s", outcome(code, obj))
		code, s := tg.watch(ctx, t, col+"?watch=true&resourceVersion="+meta(obj, "resourceVersion"))
		if s == nil {
			rec.add("watch: %d", code)
			return
		}
		defer s.cancel()
		code, obj = tg.do(ctx, t, "DELETE", col+"/r15mark", "", nil)
		rec.add("delete: %s, %s", outcome(code, obj), deletionMark(obj))
		for range 2 {
			select {
			case ev := <-s.events:
				o, _ := ev["object"].(map[string]any)
				rec.add("event %v: %s", ev["type"], deletionMark(o))
			case <-time.After(10 * time.Second): // the fake's in its bubble: at once
				rec.add("no event")
			}
		}
	})
}

// cacheHolds returns once kube-apiserver's watch cache of col holds
// every write made so far. A consistent LIST (no resourceVersion) is
// answered at etcd's current revision; a LIST at that version with
// resourceVersionMatch=NotOlderThan is served from the cache, which
// first waits until it has seen it. The fake has no cache: both
// answer at once.
func cacheHolds(ctx context.Context, t *testing.T, tg *target, col string) {
	t.Helper()
	code, obj := tg.do(ctx, t, "GET", col+"?limit=1", "", nil)
	if code != 200 {
		t.Fatalf("quorum list of %s: %s", col, outcome(code, obj))
	}
	m, _ := obj["metadata"].(map[string]any)
	rv, _ := m["resourceVersion"].(string)
	code, obj = tg.do(ctx, t, "GET", col+"?resourceVersionMatch=NotOlderThan&resourceVersion="+rv, "", nil)
	if code != 200 {
		t.Fatalf("list of %s from the cache at %s: %s", col, rv, outcome(code, obj))
	}
}

// deletionMark describes obj's deletionTimestamp (set or not) and
// deletionGracePeriodSeconds.
func deletionMark(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("deletionTimestamp set %v, deletionGracePeriodSeconds %v", m["deletionTimestamp"] != nil, m["deletionGracePeriodSeconds"])
}

// A PATCH of a custom resource's collection: kube-apiserver's patch
// handler checks the patch's media type before it looks for the name,
// so a type a custom resource does not take (strategic merge, plain
// JSON, text) is 415, one it takes (JSON patch, merge patch, apply) 400
// "name must be provided". The fake answered 400 for every type
// (route.go handler, serveNameRequired).
func TestConformancePatchOfACustomResourceCollectionChecksTheTypeFirst(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		_, col := edgeCRD(ctx, t, tg, "r15patchcol.edges.listwatch.dev")
		for _, ct := range []string{"application/strategic-merge-patch+json", "application/json", "text/plain",
			"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"} {
			code, obj := tg.patch(ctx, t, col, ct, map[string]any{"spec": map[string]any{"n": int64(2)}})
			rec.add("PATCH the collection as %s: %s", ct, outcome(code, obj))
		}
	})
}

// A request at a subresource of a custom resource whose CRD declares
// none (status, scale, or any other): apiextensions-apiserver answers
// every verb with a NotFound Status naming the object, whether it
// exists or not. The fake answered a plain 404 with no Status (route.go
// resolve: subresources are not served).
func TestConformanceASubresourceOfACustomResourceWithoutOne(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		crd, col := edgeCRD(ctx, t, tg, "r15sub.edges.listwatch.dev")
		code, obj := tg.do(ctx, t, "POST", col, "", edgeObj(crd, "v1", "a"))
		rec.add("create a: %s", outcome(code, obj))
		for _, path := range []string{"/a/status", "/a/scale", "/b/status"} {
			for _, m := range []string{"GET", "PUT", "POST", "DELETE"} {
				code, obj = tg.do(ctx, t, m, col+path, "", edgeObj(crd, "v1", "a"))
				rec.add("%s %s: %s %v", m, path, outcome(code, obj), detailsName(obj))
			}
		}
	})
}
