package simulation

import (
	"net/http"
	"time"
)

// look is one request of a replica for the leader's Lease: a GET, an
// update or a create, and the status it got (0: none, the client gave
// up or the link dropped it).
type look struct {
	at     time.Time
	status int
}

// saw reports whether the look found the Lease there: its GET, update
// or create succeeded.
func (l look) saw() bool { return l.status == http.StatusOK || l.status == http.StatusCreated }

// notingLooks wraps a replica's link to the server (outside its faults,
// so that a look a fault failed counts too) and records each of its
// looks at the leader's Lease. A candidate that has not seen the Lease
// since its holder took it cannot know that holder leads, and may create
// the Lease as soon as it finds it deleted: if it never saw it at all,
// or if the Lease was put back and deleted again between two of its
// looks (leaderelection's doc, "A deleted Lease", names both). The
// checker tells such a candidate by this record. (A create in the
// Leases' collection counts too: in the leader-elected scenario, the
// only one whose checker asks, the leader's is the only Lease.)
func (w *world) notingLooks(replica string, next http.Handler) http.Handler {
	lease := "/apis/coordination.k8s.io/v1/namespaces/" + Namespace + "/leases"
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != lease+"/"+LeaderLease && !(r.Method == http.MethodPost && r.URL.Path == lease) {
			next.ServeHTTP(rw, r)
			return
		}
		aw := &answerWriter{ResponseWriter: rw}
		next.ServeHTTP(aw, r)
		w.mu.Lock()
		w.looks[replica] = append(w.looks[replica], look{at: time.Now(), status: aw.status})
		w.mu.Unlock()
	})
}

// unawareOfHolder reports whether replica, when the Lease was deleted at
// d, could not know that the holder whose term began at held led: it
// never saw the Lease before d, or it took no look at all between held
// and d (the Lease put back and deleted again between two of its looks).
// A look that failed in between counts as a look: the candidate then
// waits the absence out afresh.
func (w *world) unawareOfHolder(replica string, held, d time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	sawEver, lookedSince := false, false
	for _, l := range w.looks[replica] {
		if !l.at.Before(d) {
			break
		}
		sawEver = sawEver || l.saw()
		lookedSince = lookedSince || !l.at.Before(held)
	}
	return !sawEver || !lookedSince
}

// answerWriter remembers the status written to the client, 0 if none.
type answerWriter struct {
	http.ResponseWriter
	status int
}

func (w *answerWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
