package fakeapiserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// kube-apiserver builds a custom resource's storage, and its watch
// cache, anew whenever its CRD is created or changed (moved to another
// version), and that cache starts at the resourceVersion it lists at: a
// WATCH from an older resourceVersion, which a reflector sends when it
// watches again from where it was, gets one ERROR event, 410 Expired,
// and the watch ends; the reflector must relist. A WATCH from a
// resourceVersion read since works.
func TestConformanceAWatchFromBeforeItsCRDWasMovedOrMadeAgainExpires(t *testing.T) {
	conform(t, testenv.Shared(t), watchAcrossCRDChanges)
}

func watchAcrossCRDChanges(ctx context.Context, t *testing.T, tg *target, rec *recorder) {
	crd := fakeapiserver.CRD{Group: "crdwatch.listwatch.dev", Version: "v1", Kind: "Cog", Plural: "cogs"}
	tg.installCRD(ctx, crd)
	col := func(version string) string {
		return "/apis/" + crd.Group + "/" + version + "/namespaces/" + tg.namespace + "/cogs"
	}
	cog := func(version, name string) map[string]any {
		return map[string]any{"apiVersion": crd.Group + "/" + version, "kind": "Cog", "metadata": map[string]any{"name": name}}
	}
	servedAndWatchable := func(version string) {
		waitFor(ctx, t, func() bool {
			code, s := tg.watch(ctx, t, col(version)+"?watch=true&timeoutSeconds=1")
			if s != nil {
				s.cancel()
			}
			return code == 200
		})
	}
	// watchFrom opens a watch from rv, writes name, and records what the
	// watch says (bookmarks aside): the write, or an ERROR and the end.
	watchFrom := func(what, version, rv, name string) {
		code, s := tg.watch(ctx, t, col(version)+"?watch=true&allowWatchBookmarks=true&resourceVersion="+rv)
		if s == nil {
			rec.add("%s: %d", what, code)
			return
		}
		defer s.cancel()
		c, _ := tg.do(ctx, t, "POST", col(version), "", cog(version, name))
		rec.add("%s: %d, create %s: %d, %s, then %s", what, code, name, c, skipBookmarks(t, s), nextOrLive(t, s))
	}
	servedAndWatchable("v1")
	_, _ = tg.do(ctx, t, "POST", col("v1"), "", cog("v1", "a"))
	_, list := tg.do(ctx, t, "GET", col("v1"), "", nil)
	before := meta(list, "resourceVersion")
	watchFrom("watch v1 from its list", "v1", before, "b")

	tg.moveCRD(ctx, crd, "v2")
	watchFrom("watch v2 from v1's list", "v2", before, "c")
	_, list = tg.do(ctx, t, "GET", col("v2"), "", nil)
	moved := meta(list, "resourceVersion")
	watchFrom("watch v2 from v2's list", "v2", moved, "d")

	v2 := crd
	v2.Version = "v2"
	tg.deleteCRD(ctx, v2)
	tg.installCRD(ctx, v2)
	defer tg.deleteCRD(ctx, v2)
	servedAndWatchable("v2")
	watchFrom("watch v2 made again from the old v2's list", "v2", moved, "e")
	_, list = tg.do(ctx, t, "GET", col("v2"), "", nil)
	watchFrom("watch v2 made again from its list", "v2", meta(list, "resourceVersion"), "f")
}

// nextOrLive is what a watch says after its first event: "end" if the
// server ends it at once, else "live" (it stays open).
func nextOrLive(t *testing.T, s *stream) string {
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return "end"
			}
			if d := describeEvent(ev); d != "BOOKMARK" {
				return d
			}
		case <-time.After(2 * time.Second):
			return "live"
		}
	}
}
