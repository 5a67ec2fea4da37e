package simulation

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/listwatch/informer/sharding"
)

// configMapsPath is the collection of the run's namespace's ConfigMaps.
const configMapsPath = "/api/v1/namespaces/" + Namespace + "/configmaps"

// notingUnlabels records each write through replica's network that
// removed a ring's label from a ConfigMap and was answered 2xx, in the
// history (Unlabelled: by the ring's sharder or by a member of the
// replica, guarded by which resourceVersion), and, for a sharder's
// write, by the object's name and that resourceVersion, which is the
// version the checker's watch saw it leave. Only a member removes its
// own label: that is its acknowledgement of a drain (or its let-go of a
// child). A sharder moves an object of a dead member by relabelling it,
// and never unlabels one; if it did, a drained object would move off a
// live member with nothing acknowledged, though the watch sees the
// versions an acknowledgement makes (movesOffLiveMembers judges such a
// move, TestADrainedObjectUnlabelledByTheSharderNotItsMemberBreaksMovesOnlyByDrain).
// It sits next to the server, inside the faults.
func (w *world) notingUnlabels(replica string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		name, named := strings.CutPrefix(r.URL.Path, configMapsPath+"/")
		if !named || r.Method != http.MethodPatch {
			next.ServeHTTP(rw, r)
			return
		}
		sharderRing, bySharder := strings.CutPrefix(r.UserAgent(), sharderAgentPrefix)
		var rings []string
		var rv string
		for _, ring := range w.opts.Scenario.rings() {
			if guard, unlabels := unlabelledFrom(r, sharding.Shard{Ring: ring}.Label()); unlabels {
				rings, rv = append(rings, ring), guard
			}
		}
		status := &statusOf{ResponseWriter: rw, code: http.StatusOK}
		next.ServeHTTP(status, r)
		if status.code/100 != 2 {
			return
		}
		for _, ring := range rings {
			by := "by a member of " + replica
			if bySharder {
				by = "by " + replica + "'s sharder of ring " + sharderRing
			}
			w.hist.add(Event{What: Unlabelled, Replica: replica, Ring: ring, Object: name, Version: rv, Detail: by})
			if !bySharder || ring != sharderRing {
				continue
			}
			w.mu.Lock()
			if w.sharderUnlabels == nil {
				w.sharderUnlabels = map[string]bool{}
			}
			w.sharderUnlabels[ring+" "+name+" "+rv] = true
			w.mu.Unlock()
		}
	})
}

// unlabelledFrom reports whether r, a merge patch, removes label (sets
// it to null), and the resourceVersion it is guarded by ("" if none). It
// leaves r's body for the server to read.
func unlabelledFrom(r *http.Request, label string) (rv string, unlabels bool) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var patch struct {
		Metadata struct {
			ResourceVersion string                     `json:"resourceVersion"`
			Labels          map[string]json.RawMessage `json:"labels"`
		} `json:"metadata"`
	}
	if err != nil || json.Unmarshal(body, &patch) != nil {
		return "", false
	}
	v, ok := patch.Metadata.Labels[label]
	return patch.Metadata.ResourceVersion, ok && string(v) == "null"
}

// unlabelledBySharder reports whether ring's sharder removed ring's
// label from name at resourceVersion rv (notingUnlabels).
func (w *world) unlabelledBySharder(ring, name, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sharderUnlabels[ring+" "+name+" "+rv]
}
