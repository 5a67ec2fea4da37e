package simulation

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
)

// A sharder's write to a shard Lease of another ring breaks "a sharder
// keeps to its ring"; its writes to its own ring's Leases, and anyone
// else's writes, do not. The rings share a prefix, as the scenario's do.
func TestASharderWritingAnotherRingsLeaseBreaksASharderKeepsToItsRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(Options{}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		h := w.keepingToRings("r0-0", w.srv)
		send := func(method, agent, name, body string) int {
			path := "/apis/coordination.k8s.io/v1/namespaces/" + Namespace + "/leases"
			if name != "" {
				path += "/" + name
			}
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", agent)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		lease := func(name, ring string) string {
			return `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"` + name +
				`","namespace":"` + Namespace + `","labels":{"lease.shard.listwatch.dev/ring":"` + ring + `"}}}`
		}
		for name, ring := range map[string]string{"web-api-m1": "web-api", "web-m2": "web"} {
			if code := send(http.MethodPost, "writer", "", lease(name, ring)); code != http.StatusCreated {
				t.Fatalf("creating Lease %s: %d", name, code)
			}
		}

		send(http.MethodDelete, sharderAgentPrefix+"web-api", "web-api-m1", "")
		send(http.MethodDelete, "member", "web-m2", "")
		send(http.MethodGet, sharderAgentPrefix+"web", "web-api-m1", "")
		if len(w.ringBroken) != 0 {
			t.Fatalf("writes within their rings, and reads, were reported: %v", w.ringBroken)
		}
		if code := send(http.MethodPost, "writer", "", lease("web-api-m3", "web-api")); code != http.StatusCreated {
			t.Fatalf("creating Lease web-api-m3: %d", code)
		}
		send(http.MethodDelete, sharderAgentPrefix+"web", "web-api-m3", "")
		if len(w.ringBroken) != 1 || w.ringBroken[0].Invariant != "a sharder keeps to its ring" {
			t.Fatalf("the web sharder's delete of a web-api Lease: %v, want one violation", w.ringBroken)
		}
	})
}
