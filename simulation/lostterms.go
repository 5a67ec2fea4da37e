package simulation

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/listwatch/informer/leaderelection"
)

// notingLeaderLeaseWrites records, as LeaseWritten events, each write of
// replica's that changed the leader's Lease: a PUT, POST or DELETE of it
// the server answered 2xx, whatever answer reached the replica (a write
// served before an injected 500 landed too). It sits next to the server,
// inside the faults.
func (w *world) notingLeaderLeaseWrites(replica string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || !strings.HasPrefix(r.URL.Path, leasesPath) {
			next.ServeHTTP(rw, r)
			return
		}
		name, named := leaseNamed(r.URL.Path)
		if named && name != LeaderLease || !named && bodyName(r) != LeaderLease {
			next.ServeHTTP(rw, r)
			return
		}
		status := &statusOf{ResponseWriter: rw, code: http.StatusOK}
		next.ServeHTTP(status, r)
		if status.code/100 == 2 {
			w.hist.add(Event{What: LeaseWritten, Replica: replica, Ring: LeaderRing, Detail: r.Method})
		}
	})
}

// statusOf remembers the status code a handler answered with.
type statusOf struct {
	http.ResponseWriter
	code int
}

func (s *statusOf) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// noteLost records a leader's term that Run reports lost to another's
// write ("written by another since this leader read it"), for
// lostOnlyToOthers.
func (w *world) noteLost(replica string, err error) {
	if errors.Is(err, leaderelection.ErrLost) && strings.Contains(err.Error(), "written by another") {
		w.hist.add(Event{What: LostToWrite, Replica: replica, Ring: LeaderRing, Member: replica, Detail: err.Error()})
	}
}

// lostOnlyToOthers: a leader whose term Run reports lost to another's
// write of the Lease lost it to a write that landed, of another replica
// (or to a delete of the Lease, a fault), since its term began. A term
// lost to the leader's own writes is a bug of the elector: its own renew
// sent twice, the second meeting the first
// (TestALeaderWhoseLandedRenewIsRetriedByTheClientKeepsItsTerm).
func lostOnlyToOthers(events []Event) []Violation {
	var out []Violation
	for i, e := range events {
		if e.What != LostToWrite {
			continue
		}
		start := -1
		for j := i - 1; j >= 0; j-- {
			if events[j].What == TermStart && events[j].Ring == LeaderRing && events[j].Member == e.Member {
				start = j
				break
			}
		}
		if start < 0 {
			continue // no term of it seen: nothing to judge it by
		}
		another := false
		for _, x := range events[start:i] {
			if x.What == LeaseWritten && x.Replica != e.Replica || x.What == FaultEvent && strings.Contains(x.Detail, "delete-") {
				another = true
				break
			}
		}
		if !another {
			out = append(out, Violation{Invariant: "a term is lost only to another", At: e.At, Text: fmt.Sprintf(
				"%s's term, begun %s, ended at %s: %s; but no other replica wrote the Lease, and nobody deleted it, meanwhile",
				e.Replica, clock(events[start].At), clock(e.At), e.Detail)})
		}
	}
	return out
}
