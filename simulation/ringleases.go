package simulation

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharding"
)

// sharderAgentPrefix begins the user agent of a sharder's clients (its
// Lease client's and its Config's), followed by its ring: how the server
// side tells a sharder's requests from its replica's member's, which
// share the replica's network.
const sharderAgentPrefix = "simulation-sharder/"

var leaseResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// sharderConfig is cfg for ring's sharder: its Lease client's and its
// own (its writes of objects' labels, notingUnlabels).
func sharderConfig(cfg *rest.Config, ring string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = sharderAgentPrefix + ring
	return cfg
}

// keepingToRings checks "a sharder keeps to its ring" (package
// sharding: a ring's Leases are found by the label that names the ring
// exactly, so a sharder never touches another ring's): a write of a
// sharder's that reaches a shard Lease labelled with another ring (the
// scenario's rings share a prefix on purpose), or that leaves one
// labelled so (a create, or a write whose body carries another ring's
// label), is a violation. Its own election Lease carries no ring label
// and is not judged.
func (w *world) keepingToRings(replica string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if ring, ok := strings.CutPrefix(r.UserAgent(), sharderAgentPrefix); ok && r.Method != http.MethodGet {
			name, named := leaseNamed(r.URL.Path)
			if named {
				if other := w.leaseRing(name); other != "" && other != ring {
					w.breakRing(replica, ring, r.Method, name, other)
				}
			}
			if named || r.URL.Path == leasesPath {
				if other := bodyRing(r); other != "" && other != ring {
					w.breakRing(replica, ring, r.Method, cmp.Or(name, "(created)"), other)
				}
			}
		}
		next.ServeHTTP(rw, r)
	})
}

// leasesPath is the collection of the run's namespace's Leases, which a
// create is sent to.
const leasesPath = "/apis/coordination.k8s.io/v1/namespaces/" + Namespace + "/leases"

// bodyRing is the ring label a write's body gives its Lease, "" if it
// gives none (or is no Lease: a DELETE's options, a patch of other
// fields). It leaves r's body for the server to read.
func bodyRing(r *http.Request) string {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || len(body) == 0 {
		return ""
	}
	if r.Method == http.MethodPatch { // a JSON patch body, not an object
		var patch struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if json.Unmarshal(body, &patch) != nil {
			return ""
		}
		return patch.Metadata.Labels[sharding.LeaseRingLabel]
	}
	lease, ok := decodeLease(body)
	if !ok {
		return ""
	}
	return lease.Labels[sharding.LeaseRingLabel]
}

// bodyName is the name a create's body gives its Lease, "" if it names
// none. It leaves r's body for the server to read.
func bodyName(r *http.Request) string {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || len(body) == 0 || r.Method != http.MethodPost {
		return ""
	}
	lease, _ := decodeLease(body)
	return lease.Name
}

// decodeLease reads a Lease from a write's body, protobuf or JSON.
func decodeLease(body []byte) (coordinationv1.Lease, bool) {
	var lease coordinationv1.Lease
	if raw, ok := bytes.CutPrefix(body, []byte("k8s\x00")); ok { // protobuf: a runtime.Unknown around the Lease
		var envelope runtime.Unknown
		if envelope.Unmarshal(raw) != nil || lease.Unmarshal(envelope.Raw) != nil {
			return coordinationv1.Lease{}, false
		}
	} else if json.Unmarshal(body, &lease) != nil {
		return coordinationv1.Lease{}, false
	}
	return lease, true
}

// leaseNamed is the name of the Lease of the run's namespace that path
// names, if it names one.
func leaseNamed(path string) (string, bool) {
	return strings.CutPrefix(path, leasesPath+"/")
}

// leaseRing is the ring label of the Lease called name on the server, ""
// if there is none (no such Lease, or not a shard Lease).
func (w *world) leaseRing(name string) string {
	u, ok := w.srv.Object(leaseResource, Namespace, name)
	if !ok {
		return ""
	}
	return u.GetLabels()[sharding.LeaseRingLabel]
}

// breakRing records a sharder's write to another ring's Lease.
func (w *world) breakRing(replica, ring, method, lease, other string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ringBroken = append(w.ringBroken, Violation{Invariant: "a sharder keeps to its ring", At: time.Now(),
		Text: fmt.Sprintf("replica %s: the sharder of ring %s sent %s for Lease %s, of ring %s", replica, ring, method, lease, other)})
}
