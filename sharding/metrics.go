package sharding

import (
	"github.com/listwatch/informer/metrics"
)

// The sharder's own metrics, labelled with its ring.
var (
	descSyncFailures = metrics.Desc{Name: "listwatch_sharder_sync_failures_total", Labels: []string{"ring"},
		Help: "Times the elected sharder could not start sharding (an informer that could not be made or did not sync in SyncTimeout) and tried again."}
	descTakeovers = metrics.Desc{Name: "listwatch_sharder_takeovers_total", Labels: []string{"ring", "result"},
		Help: "Shard Leases the sharder tried to take over, by result: taken (the member is dead for certain) or alive (the Lease changed after it was judged: renewed, released or deleted meanwhile; it is judged again). A takeover that failed counts under neither, unless read back as landed (taken): one not landed is sent again, and one whose read-back failed or that landed after it is found by a poll."}
)

// sharderMetrics are one sharder's series; a nil one counts nothing.
type sharderMetrics struct {
	syncFailures      metrics.Counter
	taken, foundAlive metrics.Counter
}

// newSharderMetrics registers ring's sharder with reg: nil, nil for a nil
// reg.
func newSharderMetrics(reg *metrics.Registry, ring string) (*sharderMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	if err := reg.Register("sharder", ring); err != nil {
		return nil, err
	}
	m := &sharderMetrics{}
	var err error
	counter := func(d metrics.Desc, values ...string) metrics.Counter {
		var c metrics.Counter
		if err == nil {
			c, err = reg.Counter(d, values)
		}
		return c
	}
	m.syncFailures = counter(descSyncFailures, ring)
	m.taken, m.foundAlive = counter(descTakeovers, ring, "taken"), counter(descTakeovers, ring, "alive")
	if err != nil {
		reg.Unregister("sharder", ring)
		return nil, err
	}
	return m, nil
}

func (m *sharderMetrics) syncFailed() {
	if m != nil {
		m.syncFailures.Add(1)
	}
}

func (m *sharderMetrics) tookOver(taken bool) {
	switch {
	case m == nil:
	case taken:
		m.taken.Add(1)
	default:
		m.foundAlive.Add(1)
	}
}
