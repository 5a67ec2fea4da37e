package replicas

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The checker's own logic, on made-up lines: no control plane needed
// (TestMain starts one anyway, for the test above).

func TestTheSameSeedGivesTheSameScheduleWithEveryKindAtLeastOnce(t *testing.T) {
	tm := timing{Lease: 4 * time.Second, Renew: 3 * time.Second, Retry: 500 * time.Millisecond}
	a, b := newSchedule(7, 0, tm), newSchedule(7, 0, tm)
	require.Equal(t, a, b)
	require.NotEqual(t, a, newSchedule(8, 0, tm))
	seen := map[faultKind]int{}
	replicas := startReplicas
	for _, f := range a {
		seen[f.kind]++
		switch f.kind {
		case join, killSharder:
			replicas++
		case leave:
			replicas--
		}
		require.True(t, replicas >= minReplicas && replicas <= maxReplicas, "replicas stay within bounds: %d", replicas)
		if f.kind == pause || f.kind == blackhole {
			require.Greater(t, f.hold, tm.Lease, "a pause or partition outlasts the Lease")
		}
	}
	require.Len(t, seen, len(allKinds), "every kind of fault runs")
	long := newSchedule(7, 2*time.Minute, tm)
	require.Greater(t, len(long), len(a), "a longer duration adds faults")
	require.Equal(t, a, long[:len(a)], "and starts like the short one")
}

// at is a time a given number of milliseconds into a made-up run.
func at(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }

// line makes an event a replica could have printed.
func line(proc string, ms int, kind string, fields ...string) event {
	return event{proc: proc, kind: kind, fields: fields, at: at(ms)}
}

func TestOverlapsOfAPausedReplicaAreReportedApartFromTheRest(t *testing.T) {
	events := []event{
		line("r1", 0, "B", "web", "r1-a", "ns/p-0001"),
		line("r2", 100, "B", "web", "r2-b", "ns/p-0001"), // overlaps r1, which was paused
		line("r2", 200, "E", "web", "r2-b", "ns/p-0001"),
		line("r1", 9000, "E", "web", "r1-a", "ns/p-0001"),
		line("r3", 300, "B", "web", "r3-c", "ns/p-0002"),
		line("r2", 400, "B", "web", "r2-b", "ns/p-0002"), // overlaps r3, nobody paused
		line("r2", 500, "E", "web", "r2-b", "ns/p-0002"),
		line("r3", 600, "E", "web", "r3-c", "ns/p-0002"),
		line("r3", 700, "B", "web-api", "r3-d", "ns/p-0002"), // another ring: no overlap with web
		line("r3", 800, "E", "web-api", "r3-d", "ns/p-0002"),
		line("r1", 10000, "B", "web", "r1-a", "ns/p-0003"), // never ends: r1 was killed at 10.5 s
		line("r2", 10400, "B", "web", "r2-b", "ns/p-0003"),
		line("r2", 10600, "E", "web", "r2-b", "ns/p-0003"),
	}
	ends := map[string]time.Time{"r1": at(10500), "r2": at(20000), "r3": at(20000)}
	paused := map[string]span{"r1": {from: at(50), to: at(8000)}}
	found := overlaps(intervals(events, ends), func(iv interval) bool {
		p, ok := paused[iv.proc]
		return ok && excusedByPause(iv, []span{p}, time.Time{})
	})
	var got []string
	for _, o := range found {
		got = append(got, fmt.Sprintf("%s %s %s/%s paused=%t", o.a.ring, o.a.key, o.a.member, o.b.member, o.paused))
	}
	require.Equal(t, []string{
		"web ns/p-0001 r1-a/r2-b paused=true",
		"web ns/p-0002 r3-c/r2-b paused=false",
		"web ns/p-0003 r1-a/r2-b paused=false", // a cut interval ends at the kill, not before
	}, got)
}

func TestALateWriteAcceptedWhileAnotherMemberHeldTheKeyIsAFailure(t *testing.T) {
	events := []event{
		line("r1", 0, "B", "web", "r1-a", "ns/p-1"),
		line("r2", 5000, "B", "web", "r2-b", "ns/p-1"),
		line("r2", 5100, "E", "web", "r2-b", "ns/p-1"),
		line("r1", 7010, "W", "web", "r1-a", "ns/p-1", "p-1", "ok", "1", fmt.Sprint(at(7000).UnixNano())),
		line("r1", 7020, "E", "web", "r1-a", "ns/p-1"),
		line("r1", 8000, "B", "web", "r1-a", "ns/p-2"),
		line("r1", 8010, "W", "web", "r1-a", "ns/p-2", "p-2", "ok", "1", fmt.Sprint(at(8005).UnixNano())), // nobody else had p-2
		line("r1", 8020, "W", "web", "r1-a", "ns/p-2", "p-2-web", "conflict", "1", fmt.Sprint(at(8015).UnixNano())),
		line("r1", 8030, "E", "web", "r1-a", "ns/p-2"),
	}
	ends := map[string]time.Time{"r1": at(9000), "r2": at(9000)}
	late := countLateWrites(events, intervals(events, ends))
	require.Equal(t, 1, late.refused)
	require.Equal(t, 1, late.acceptedFree)
	require.Equal(t, 1, late.acceptedHeld)
	require.Len(t, late.failures, 1)
	require.Contains(t, late.failures[0], "r2-b (r2) reconciled it")
}

func TestADirectRelabelBeforeTheOldMembersTermEndedIsAMoveOffALiveMember(t *testing.T) {
	events := []event{
		line("r1", 0, "member", "web", "r1-a"),
		line("r1", 5000, "stopped", "web", "r1-a", fmt.Sprint(at(4000).UnixNano())), // ran out at 4 s (a pause)
		line("r2", 0, "member", "web", "r2-b"),
		line("r2", 6000, "stopped", "web", "r2-b", fmt.Sprint(at(8000).UnixNano())), // stopped at 6 s (a leave)
		line("r3", 0, "member", "web", "r3-c"),                                      // killed at 7 s
	}
	ends := map[string]time.Time{"r1": at(9000), "r2": at(6500), "r3": at(7000)}
	moves := []move{
		{ring: "web", object: "p-1", from: "r1-a", to: "r2-b", seen: at(4500)},              // after r1-a's deadline: fine
		{ring: "web", object: "p-2", from: "r1-a", to: "r2-b", seen: at(3500)},              // before it: off a live member
		{ring: "web", object: "p-3", from: "r2-b", to: "r3-c", seen: at(6200)},              // after r2-b stopped, before its nominal deadline: fine
		{ring: "web", object: "p-4", from: "r3-c", to: "r1-a", seen: at(6900)},              // before r3 was killed
		{ring: "web", object: "c-5", child: true, from: "r1-a", to: "r2-b", seen: at(4500)}, // a child after r1-a's deadline: fine
		{ring: "web", object: "c-6", child: true, from: "r1-a", to: "r2-b", seen: at(3500)}, // a child before it, even if its parent left r1-a: off a live member
	}
	live, _ := movesOffLiveMembers(moves, events, ends)
	var got []string
	for _, m := range live {
		got = append(got, m.object)
	}
	require.Equal(t, []string{"p-2", "p-4", "c-6"}, got)
}

func TestAReconcileBegunAfterATermRanOutInAPauseCountsAsPaused(t *testing.T) {
	pause := []span{{from: at(1000), to: at(8000)}}
	deadline := at(4000) // the term ran out while the process was stopped
	require.True(t, excusedByPause(interval{start: at(8010), end: at(8015)}, pause, deadline), "begun after the resume, its term over")
	require.True(t, excusedByPause(interval{start: at(500), end: at(8100)}, pause, deadline), "running across the pause")
	require.False(t, excusedByPause(interval{start: at(200), end: at(900)}, pause, deadline), "before the pause")
	require.False(t, excusedByPause(interval{start: at(8010), end: at(8015)}, pause, at(9000)), "a term that did not run out in the pause")
}
