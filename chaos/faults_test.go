package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
)

// The faults the harness injects.
const (
	faultCut           = "cut"            // CutAll: every open connection ends with a reset
	faultLatency       = "latency"        // a latency spike of up to 400ms RTT, for up to 1.5s
	faultRefuse        = "refuse"         // CutAll, then connections refused for up to 1.5s
	faultCompact       = "compact"        // etcd compacted to its current revision
	faultOutageCompact = "outage+compact" // cut off for 1.5s while etcd is compacted: the resumed watch is too old
	faultRestart       = "restart"        // kube-apiserver restarted
	// cut off while etcd is compacted and kube-apiserver restarted: with the
	// watch cache on, the new cache starts after the compaction, so the
	// resumed watch is too old
	faultOutageRestart = "outage+restart"
)

// Every fault, in the order a run first injects each (then at random).
var allFaults = []string{faultCut, faultLatency, faultRefuse, faultCompact, faultOutageCompact, faultRestart, faultOutageRestart}

// injector injects faults at random times until its ctx ends.
type injector struct {
	cp    *testenv.ControlPlane
	proxy *faultproxy.Proxy
	rng   *rand.Rand

	mu       sync.Mutex
	injected map[string]int // guarded by mu
	failures []string       // faults that could not be injected; guarded by mu
}

// run injects every kind of fault once, in a random order, then (unless
// once) faults chosen at random (restarts, the slowest, less often), with
// a random pause before each, until ctx ends. A fault once begun runs to
// its end under opCtx, so an apiserver is never left stopped or
// connections refused.
func (in *injector) run(ctx, opCtx context.Context, once bool) {
	first := slices.Clone(allFaults)
	in.rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	weighted := []string{faultCut, faultCut, faultLatency, faultLatency, faultRefuse, faultCompact, faultOutageCompact, faultRestart, faultOutageRestart}
	for i := 0; ctx.Err() == nil && !(once && i == len(first)); i++ {
		pause, f := time.Duration(200+in.rng.IntN(1300))*time.Millisecond, weighted[in.rng.IntN(len(weighted))]
		if i < len(first) {
			pause, f = time.Duration(100+in.rng.IntN(400))*time.Millisecond, first[i]
		}
		sleep(ctx, pause)
		if ctx.Err() != nil {
			return
		}
		if err := in.inject(opCtx, f); err != nil {
			in.mu.Lock()
			in.failures = append(in.failures, fmt.Sprintf("%s: %v", f, err))
			in.mu.Unlock()
		}
		in.mu.Lock()
		in.injected[f]++
		in.mu.Unlock()
	}
}

func (in *injector) inject(ctx context.Context, fault string) error {
	switch fault {
	case faultCut:
		in.proxy.CutAll()
	case faultLatency:
		in.proxy.SetRTT(time.Duration(20+in.rng.IntN(380)) * time.Millisecond)
		sleep(ctx, time.Duration(300+in.rng.IntN(1200))*time.Millisecond)
		in.proxy.SetRTT(0)
	case faultRefuse:
		d := time.Duration(300+in.rng.IntN(1200)) * time.Millisecond
		in.proxy.Refuse(d)
		in.proxy.CutAll()
		sleep(ctx, d)
	case faultCompact:
		_, err := in.cp.Compact(ctx)
		return err
	case faultOutageCompact:
		// The writers go on meanwhile, so the informer's resourceVersion
		// falls behind the compaction and its next watch is too old.
		in.proxy.Refuse(1500 * time.Millisecond)
		in.proxy.CutAll()
		sleep(ctx, time.Second)
		_, err := in.cp.Compact(ctx)
		sleep(ctx, 500*time.Millisecond)
		return err
	case faultRestart:
		return in.cp.Restart(ctx)
	case faultOutageRestart:
		in.proxy.Refuse(time.Minute)
		in.proxy.CutAll()
		defer in.proxy.Refuse(time.Millisecond) // ends the refusal
		sleep(ctx, 500*time.Millisecond)
		if _, err := in.cp.Compact(ctx); err != nil {
			return err
		}
		return in.cp.Restart(ctx)
	}
	return nil
}

// summary is "cut=3 latency=2 ..." in allFaults order, and the total.
func (in *injector) summary() (string, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var parts []string
	total := 0
	for _, f := range allFaults {
		parts = append(parts, fmt.Sprintf("%s=%d", f, in.injected[f]))
		total += in.injected[f]
	}
	return strings.Join(parts, " "), total
}
