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

// unawareOfHolder reports whether replica, which created the Lease at
// created after its delete at d, did so as leaderelection documents for
// a candidate that could not know the Lease was held: it never saw the
// Lease before d, or its looks found it absent without a break (no look
// that saw it, none that failed) for a whole LeaseDuration before
// created, the Lease having been put back and deleted again between two
// of them. A candidate whose last look before the delete saw the Lease
// waits a LeaseDuration from its first look that finds it absent, and
// one whose look failed waits afresh: neither can create it so soon.
func (w *world) unawareOfHolder(replica string, d, created time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	sawBefore := false
	var absentSince time.Time // the start of the unbroken run of 404s; zero if none
	for _, l := range w.looks[replica] {
		if !l.at.Before(created) {
			break
		}
		switch {
		case l.status == http.StatusNotFound:
			if absentSince.IsZero() {
				absentSince = l.at
			}
		case l.status == http.StatusCreated:
			// its own create; it ends no run
		default:
			absentSince = time.Time{} // a sight, or a look that failed
		}
		if l.at.Before(d) && l.saw() {
			sawBefore = true
		}
	}
	return !sawBefore || (!absentSince.IsZero() && created.Sub(absentSince) >= w.opts.Timing.Lease)
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
