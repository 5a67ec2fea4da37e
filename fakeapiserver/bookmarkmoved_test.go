package fakeapiserver_test

import (
	"testing"
	"testing/synctest"
)

// The bookmark 2 s before a watch's timeout comes only if the server's
// resourceVersion has moved past where the watch started, as
// kube-apiserver's watch cache sends it; a write to another resource
// moves it too. (The conformance script compares this only for the
// watch its own write moved past: on a shared real control plane,
// writes elsewhere decide the other.)
func TestATimeoutBookmarkComesOnlyOnceTheServerMovedPastTheWatchsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		tg := fakeTarget(t)
		col := "/api/v1/namespaces/" + tg.namespace + "/configmaps"
		_, w := tg.do(ctx, t, "POST", col, "", cm("a", nil, nil))
		from := col + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion=" + meta(w, "resourceVersion")
		events := func(s *stream) []string {
			var got []string
			for ev := s.next(t); ev != "end"; ev = s.next(t) {
				got = append(got, ev)
			}
			return got
		}

		_, idle := tg.watch(ctx, t, from)
		if got := events(idle); len(got) != 0 {
			t.Errorf("a watch nothing moved past got %v, want nothing", got)
		}
		_, moved := tg.watch(ctx, t, from)
		secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "elsewhere"}}
		tg.do(ctx, t, "POST", "/api/v1/namespaces/"+tg.namespace+"/secrets", "", secret)
		if got := events(moved); len(got) != 1 || got[0] != "BOOKMARK" {
			t.Errorf("a watch another resource's write moved past got %v, want one BOOKMARK", got)
		}
	})
}
