package replicas

import "fmt"

// lateWrites counts the writes replicas sent after their term's
// deadline (a member resumed from SIGSTOP, or starved of CPU, whose
// watchdog had not yet ended its context). Every one is guarded by the
// resourceVersion its reconcile read.
//
// One that the API server accepted is a failure only if another member
// of the ring reconciled the key meanwhile (between the late writer's
// read and its write's answer): then two members acted on one object and
// the guard did not stop it. If nobody else had the key — the sharder
// had not moved it yet, so nobody had written it since the read — the
// write is what the late member would have written in its term, and is
// counted as harmless.
type lateWrites struct {
	refused      int      // 409 Conflict: the guard worked
	acceptedFree int      // accepted while no other member had reconciled the key: harmless
	acceptedHeld int      // accepted while another member had: a failure each
	otherwise    int      // 403, a timeout, a missing object
	failures     []string // one line per acceptedHeld
}

// countLateWrites reads every W line with late=1 against the intervals.
func countLateWrites(events []event, all []interval) lateWrites {
	var out lateWrites
	for _, ev := range events {
		if ev.kind != "W" || len(ev.fields) != 7 || ev.fields[5] != "1" {
			continue
		}
		ring, member, key, object, result, sent := ev.fields[0], ev.fields[1], ev.fields[2], ev.fields[3], ev.fields[4], nanos(ev.fields[6])
		switch result {
		case "conflict":
			out.refused++
			continue
		case "ok":
		default:
			out.otherwise++
			continue
		}
		from := sent // the read happened at the start of the reconcile that sent it
		for _, iv := range all {
			if iv.ring == ring && iv.member == member && iv.key == key && !iv.start.After(sent) && !iv.end.Before(sent) {
				from = iv.start
			}
		}
		held := ""
		for _, iv := range all {
			if iv.ring == ring && iv.key == key && iv.member != member && iv.start.Before(ev.at) && from.Before(iv.end) {
				held = fmt.Sprintf("%s (%s) reconciled it %v–%v", iv.member, iv.proc, clock(iv.start), clock(iv.end))
				break
			}
		}
		if held == "" {
			out.acceptedFree++
			continue
		}
		out.acceptedHeld++
		out.failures = append(out.failures, fmt.Sprintf("%s %s: %s (%s) wrote %s after its term, sent %v, accepted at %v, while %s",
			ring, key, member, ev.proc, object, clock(sent), clock(ev.at), held))
	}
	return out
}
