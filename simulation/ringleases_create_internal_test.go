package simulation

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
)

// A sharder's write that makes a shard Lease of another ring breaks "a
// sharder keeps to its ring" as much as one that changes such a Lease:
// a create (POST to the collection) of a Lease labelled with ring
// web-api, sent by ring web's sharder, reaches a Lease of another ring.
// keepingToRings judges only requests whose path names a Lease, so a
// create, which names none in its path, is never judged.
func TestASharderCreatingAnotherRingsLeaseBreaksASharderKeepsToItsRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(Options{}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		h := w.keepingToRings("r0-0", w.srv)
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"shard-web-api.m1","namespace":"` + Namespace +
			`","labels":{"lease.shard.listwatch.dev/ring":"web-api","lease.shard.listwatch.dev/member":"m1"}}}`
		req := httptest.NewRequest(http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+Namespace+"/leases", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", sharderAgentPrefix+"web")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("creating the Lease: %d %s", rec.Code, rec.Body)
		}
		if w.leaseRing("shard-web-api.m1") != "web-api" {
			t.Fatalf("the Lease is not there, labelled web-api")
		}
		if len(w.ringBroken) != 1 {
			t.Fatalf("ring web's sharder created a Lease of ring web-api; violations: %v, want one", w.ringBroken)
		}
	})
}
