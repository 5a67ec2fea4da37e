package fakeapiserver_test

// Conformance cases a re-review of the last round's fixes (e41002f)
// found: each fails on the fake when written; the comment on each says
// what kube-apiserver answers, and what the fake answered then.

import (
	"context"
	"testing"

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
func TestConformanceWatchWithoutInitialEvents(t *testing.T) {
	conform(t, testenv.Shared(t), func(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		code, obj := tg.do(ctx, t, "POST", col, "", cm("r15noinit-a", nil, nil))
		rec.add("create a: %s", outcome(code, obj))
		for i, rv := range []string{"&resourceVersion=0", ""} {
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
