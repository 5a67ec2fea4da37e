package simulation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Kind names a fault.
type Kind string

// maxLatency bounds a Latency fault's delay of one request.
const maxLatency = 3 * time.Second

// The faults a schedule is made of. Window faults (latency, hang,
// errors, partition, pause, forbidden) last For; the others happen at
// once.
const (
	// Latency delays each request of the replica by up to Max.
	Latency Kind = "latency"
	// Hang makes each request of the replica hang, with probability P,
	// until its client gives up: a stalled server or a lost packet.
	Hang Kind = "hang"
	// Errors answers each request of the replica, with probability P,
	// with Status (409, 429, 500 or 503) instead of serving it; a 500
	// answers half the writes after serving them, as kube-apiserver's
	// ServerTimeout does (the write landed, a Retry-After is sent).
	Errors Kind = "errors"
	// Partition cuts the replica off: its open watches end, and every
	// request hangs until its client gives up.
	Partition Kind = "partition"
	// Pause stops the replica as SIGSTOP does: its requests wait, its
	// timers (on its Clock) fire only after the resume, its reconciles
	// stop where they are; the others go on.
	Pause Kind = "pause"
	// Kill cancels the replica's context and waits until all of it has
	// stopped; For later a new replica, with a new identity, takes its
	// slot.
	Kill Kind = "kill"
	// CutWatches ends every open watch, as a broken connection does.
	CutWatches Kind = "cut-watches"
	// Compact compacts the server's history to now and cuts every watch:
	// each informer's re-watch answers 410 and it relists.
	Compact Kind = "compact"
	// DeleteMemberLease deletes a member's shard Lease (sharded), or the
	// leader's Lease (leader-elected).
	DeleteMemberLease Kind = "delete-member-lease"
	// DeleteSharderLease deletes a ring's elected sharder's Lease.
	DeleteSharderLease Kind = "delete-sharder-lease"
	// Forbidden answers each new request of the replica for the run's
	// ConfigMaps with 403 Forbidden, as when RBAC takes the controller's
	// access away and gives it back: its Leases and discovery are
	// untouched, and a watch already open goes on (kube-apiserver
	// authorizes a request once, when it starts).
	Forbidden Kind = "forbidden"
	// Lag holds the replica's watch streams for the window: each stays
	// open, its events queue on the server and arrive together at the
	// window's end, as from an API server whose watch cache fell behind,
	// while the replica's other requests are served. Its caches then lag
	// its own writes, which a read-your-writes guard holds keys for, up
	// to its MaxHold.
	Lag Kind = "lag"
	// Skew makes the replica's clock run at Rate (within maxRateSkew of
	// true time) for the window: its leases, renew deadlines and retries
	// are timed on it. After the window it runs true again, off by what
	// the window added.
	Skew Kind = "skew"
	// RemoveCRD deletes the custom resources scenario's
	// CustomResourceDefinition: its objects are deleted, its watches end,
	// its paths answer 404 (fakeapiserver.Server.RemoveCRD).
	RemoveCRD Kind = "remove-crd"
	// InstallCRD installs it again, served at Version, if it is not
	// installed.
	InstallCRD Kind = "install-crd"
	// MoveCRD serves it at Version instead of its current version, if it
	// is installed: its objects stay (fakeapiserver.Server.MoveCRD).
	MoveCRD Kind = "move-crd"
	// RescopeCRD deletes it, its objects with it, and installs it again
	// at its version with the other scope, namespaced ↔ cluster-scoped,
	// if it is installed: a CRD's scope is immutable, so it changes no
	// other way. While it is cluster-scoped, no namespace of Widgets is
	// served: InformerFor refuses one, and a held informer of one must
	// say it is not served and cache nothing.
	RescopeCRD Kind = "rescope-crd"
	// RekindCRD deletes it, its objects with it, and installs it again
	// at its version and scope for the other kind, Widget ↔ Gadget,
	// under the same plural, if it is installed. While it holds Gadgets,
	// an informer of the widget Go type is told of nothing it can
	// decode: InformerFor refuses it (a *KindError), and a held one must
	// say it is not served and cache nothing. The unstructured holders
	// hold Gadgets as they held Widgets.
	RekindCRD Kind = "rekind-crd"
)

// The kinds the CRD holds, one at a time: Widget, the typed keeper's,
// and the other a RekindCRD switches to.
const (
	widgetKind = "Widget"
	gadgetKind = "Gadget"
)

// windowed reports whether k lasts For.
func (k Kind) windowed() bool {
	switch k {
	case Latency, Hang, Errors, Partition, Pause, Forbidden, Skew, Lag:
		return true
	}
	return false
}

// Fault is one timed event of a schedule. At counts from the start of
// the run, on simulated time.
type Fault struct {
	At      time.Duration
	Kind    Kind
	Replica int           // the slot it hits, for the faults of one replica
	For     time.Duration // a window's length; a kill's wait before the restart; the writes an InstallCRD is owed; a MoveCRD's flip back (see NewCRDSchedule)
	P       float64       // Hang's and Errors' probability per request
	Status  int           // Errors' status code
	Max     time.Duration // Latency's bound
	Ring    int           // which ring's Lease, for the Lease deletes
	Rate    float64       // Skew's clock rate (1 is true time)
	Version string        // InstallCRD's and MoveCRD's version
	Back    int           // a flipping MoveCRD's discovery request before which it moves back (see NewCRDSchedule)
}

// String is the fault as a schedule prints it: its start, kind and target.
func (f Fault) String() string {
	s := fmt.Sprintf("%6.1fs %s", f.At.Seconds(), f.Kind)
	switch f.Kind {
	case Latency:
		s += fmt.Sprintf(" r%d for %v up to %v", f.Replica, f.For, f.Max)
	case Hang:
		s += fmt.Sprintf(" r%d for %v p=%.2f", f.Replica, f.For, f.P)
	case Errors:
		s += fmt.Sprintf(" r%d for %v p=%.2f status=%d", f.Replica, f.For, f.P, f.Status)
	case Partition, Pause, Forbidden, Lag:
		s += fmt.Sprintf(" r%d for %v", f.Replica, f.For)
	case Skew:
		s += fmt.Sprintf(" r%d for %v rate %.2f", f.Replica, f.For, f.Rate)
	case Kill:
		s += fmt.Sprintf(" r%d restart after %v", f.Replica, f.For)
	case DeleteMemberLease:
		s += fmt.Sprintf(" r%d ring %d", f.Replica, f.Ring)
	case DeleteSharderLease:
		s += fmt.Sprintf(" ring %d", f.Ring)
	case InstallCRD, RescopeCRD, RekindCRD:
		if f.Version != "" { // a rescope or rekind keeps the CRD's version
			s += " " + f.Version
		}
		if f.For > 0 {
			s += fmt.Sprintf(", then writes for %v", f.For)
		}
	case MoveCRD:
		s += " " + f.Version
		if f.For > 0 {
			s += fmt.Sprintf(", back before discovery request %d or after %v", f.Back, f.For)
		}
	}
	return s
}

// Schedule is a run's faults, in the order of At: a value to print,
// replay and shrink.
type Schedule []Fault

// String lists the faults, one a line, in order.
func (s Schedule) String() string {
	var b strings.Builder
	for _, f := range s {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Without returns s without its i-th fault.
func (s Schedule) Without(i int) Schedule {
	return slices.Delete(slices.Clone(s), i, i+1)
}

// End is when the last fault's window (or restart) ends.
func (s Schedule) End() time.Duration {
	var end time.Duration
	for _, f := range s {
		end = max(end, f.At+f.For)
	}
	return end
}

// NewSchedule draws a schedule from seed: about one fault every
// length/events, of every kind, on random replicas of replicas slots,
// within length. The same arguments give the same schedule.
func NewSchedule(seed int64, replicas int, length time.Duration) Schedule {
	kinds := []Kind{Latency, Hang, Errors, Partition, Pause, Kill, CutWatches, Compact, DeleteMemberLease, DeleteSharderLease, Forbidden, Skew, Lag}
	weights := []int{2, 3, 3, 2, 2, 2, 1, 1, 2, 1, 2, 2, 2}
	return drawSchedule(rand.New(rand.NewPCG(uint64(seed), 0x5eed)), replicas, length, kinds, weights)
}

// NewCRDSchedule draws the custom resources scenario's schedule from
// seed: NewSchedule's network faults, lags and kills (no Lease deletes,
// no Forbidden, which is for ConfigMaps, no Skew, which no part of it
// times itself by), and the CRD removed, installed again and moved
// between CRDVersions, about twice as often as any other fault. A Lag
// holds a replica's watches while the CRD comes and goes: its informers
// hear of a move or a removal late, through their served checks first.
//
// An install late in the faults would leave the writers no time to
// make Widgets for "held informer equals server" to compare, so the
// CRD's last install is owed crdWrites of writes after it (its For: the
// faults end no sooner), as is its last rescope or rekind; a run that
// ends with the CRD removed, cluster-scoped or holding Gadgets is judged
// so, then restored (see crdRestore).
//
// Half the removes delete the CRD only to create it again at once with
// the other scope (RescopeCRD, drawn apart from the rest of the
// schedule): a run may end with it cluster-scoped, which is judged so,
// then restored namespaced.
//
// Half the moves are flips: the CRD moves back to the version it left
// within 50 ms, as when two controllers apply different
// versions of it: just before the Back'th discovery request of the CRD's
// group that any replica makes after the move (one to three), or after
// the move's For, whichever comes first (both drawn apart from the rest
// of the schedule). A served check asks discovery in a few requests, so
// a flip can fall between them, which one look cannot tell from a
// deletion (reflector: "gone" is believed only when said twice).
//
// One schedule in three also re-creates the CRD for the other kind
// (RekindCRD), at a time drawn apart from the rest, so that adding it
// left every other fault of every seed where it was. The same arguments
// give the same schedule.
func NewCRDSchedule(seed int64, replicas int, length time.Duration) Schedule {
	kinds := []Kind{Latency, Hang, Errors, Partition, Pause, Kill, CutWatches, Compact, RemoveCRD, InstallCRD, MoveCRD, Lag}
	weights := []int{2, 2, 2, 1, 1, 1, 1, 1, 3, 3, 3, 1}
	s := drawSchedule(rand.New(rand.NewPCG(uint64(seed), 0xc7d5)), replicas, length, kinds, weights)
	flips := rand.New(rand.NewPCG(uint64(seed), 0xf119))
	rescopes := rand.New(rand.NewPCG(uint64(seed), 0x5c09e))
	for i := range s {
		if s[i].Kind == MoveCRD && flips.IntN(2) == 0 {
			s[i].For = time.Duration(100+flips.IntN(int(maxFlip/time.Microsecond)-100)) * time.Microsecond
			s[i].Back = 1 + flips.IntN(3)
		}
		if s[i].Kind == RemoveCRD && rescopes.IntN(2) == 0 {
			s[i].Kind = RescopeCRD
		}
	}
	if rekinds := rand.New(rand.NewPCG(uint64(seed), 0x4e1d)); rekinds.IntN(3) == 0 {
		at := 2*time.Second + time.Duration(rekinds.Int64N(int64(max(length-2*time.Second, time.Second))))
		s = append(s, Fault{At: at.Truncate(100 * time.Millisecond), Kind: RekindCRD})
		slices.SortStableFunc(s, func(a, b Fault) int { return int(a.At - b.At) })
	}
	last, _ := crdEnd(s)
	if last >= 0 && (s[last].Kind == InstallCRD || s[last].Kind == RescopeCRD || s[last].Kind == RekindCRD) {
		s[last].For = crdWrites
	}
	return s
}

// crdWrites is the writes the CRD's last install (rescope, rekind) is owed: about 15
// writes, a third of them creates.
const crdWrites = 3 * time.Second

// maxFlip bounds how long a flipped CRD stays at the version it moved to.
const maxFlip = 50 * time.Millisecond

// crdEnd replays s's CRD faults from the run's start (served at
// CRDVersions[0]) as the world applies them: the index of the last that
// changes the CRD (-1 for none), and whether it is served at the end.
// A flip's move back comes before any fault that starts after it.
func crdEnd(s Schedule) (last int, served bool) {
	last, version := -1, CRDVersions[0]
	var back struct {
		at       time.Duration
		from, to string // moves to from, if still at to
	}
	for i, f := range s {
		if back.to != "" && back.at <= f.At {
			if version == back.to {
				version = back.from
			}
			back.to = ""
		}
		switch {
		case f.Kind == MoveCRD && f.For > 0 && version != "" && version != f.Version:
			back.at, back.from, back.to = f.At+f.For, version, f.Version
			version = f.Version
		case f.Kind == RemoveCRD && version != "":
			version = ""
		case f.Kind == InstallCRD && version == "":
			version = f.Version
		case f.Kind == MoveCRD && version != "" && version != f.Version:
			version = f.Version
		case (f.Kind == RescopeCRD || f.Kind == RekindCRD) && version != "":
		default:
			continue
		}
		last = i
	}
	if back.to != "" && version == back.to {
		version = back.from
	}
	return last, version != ""
}

// drawSchedule draws about one fault every length/6s (at least four) of
// kinds, by weights, from rng.
func drawSchedule(rng *rand.Rand, replicas int, length time.Duration, kinds []Kind, weights []int) Schedule {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := 4 + rng.IntN(int(length/(6*time.Second))+1)
	var s Schedule
	for range n {
		pick, k := rng.IntN(total), Kind("")
		for i, w := range weights {
			if pick < w {
				k = kinds[i]
				break
			}
			pick -= w
		}
		f := Fault{At: 2*time.Second + time.Duration(rng.Int64N(int64(max(length-2*time.Second, time.Second)))),
			Kind: k, Replica: rng.IntN(replicas), Ring: rng.IntN(2)}
		f.At = f.At.Truncate(100 * time.Millisecond)
		switch k {
		case Latency:
			f.For, f.Max = seconds(rng, 2, 15), time.Duration(100+rng.IntN(int(maxLatency/time.Millisecond)-100))*time.Millisecond
		case Hang:
			f.For, f.P = seconds(rng, 2, 15), 0.2+0.6*rng.Float64()
		case Errors:
			f.For, f.P, f.Status = seconds(rng, 2, 15), 0.2+0.7*rng.Float64(), []int{409, 429, 500, 503}[rng.IntN(4)]
		case Partition, Pause:
			f.For = seconds(rng, 1, 10)
		case Forbidden:
			f.For = seconds(rng, 2, 15)
		case Lag:
			f.For = seconds(rng, 2, 12) // past the guards' MaxHold (5 s) seven times in ten
		case Skew:
			f.For = seconds(rng, 5, 30)
			f.Rate = 1 + maxRateSkew*(2*rng.Float64()-1)
			f.Rate = float64(int(f.Rate*100)) / 100
		case Kill:
			f.For = seconds(rng, 0, 5)
		case InstallCRD, MoveCRD:
			f.Version = CRDVersions[rng.IntN(len(CRDVersions))]
		}
		f.P = float64(int(f.P*100)) / 100
		s = append(s, f)
	}
	slices.SortStableFunc(s, func(a, b Fault) int { return int(a.At - b.At) })
	return s
}

// seconds is a whole number of tenths of seconds in [lo, hi) seconds.
func seconds(rng *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo*10+rng.IntN((hi-lo)*10)) * 100 * time.Millisecond
}
