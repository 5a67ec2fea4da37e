package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// interval is one reconcile of one key by one member, on the host's clock.
type interval struct {
	member     string
	start, end time.Time
}

// intervals pairs every member's B and E lines per key. A reconcile that
// never printed its E was cut short by a kill: it ended at the kill.
func intervals(events []event, killedAt map[string]time.Time) map[string][]interval {
	type mk struct{ member, key string }
	open := map[mk]event{}
	out := map[string][]interval{}
	for _, ev := range events {
		switch ev.kind {
		case "B":
			open[mk{ev.fields[0], ev.fields[1]}] = ev
		case "E":
			k := mk{ev.fields[0], ev.fields[1]}
			if b, ok := open[k]; ok {
				out[k.key] = append(out[k.key], interval{k.member, b.at, ev.at})
				delete(open, k)
			}
		}
	}
	for k, b := range open {
		end := killedAt[b.proc]
		if end.IsZero() {
			end = time.Now() // still running
		}
		out[k.key] = append(out[k.key], interval{k.member, b.at, end})
	}
	for _, all := range out {
		sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	}
	return out
}

// checkNoOverlap fails if two members' reconciles of one key overlapped.
func checkNoOverlap(all map[string][]interval) error {
	for key, ivs := range all {
		var last interval // the interval that ends latest so far
		for _, iv := range ivs {
			if last.member != "" && iv.member != last.member && iv.start.Before(last.end) {
				return fmt.Errorf("%s: %s began a reconcile at %v, before %s's ended at %v", key, iv.member, iv.start, last.member, last.end)
			}
			if iv.end.After(last.end) {
				last = iv
			}
		}
	}
	return nil
}

// takeover returns, over keys, the longest time from since until the
// end of the first reconcile by a member other than from that began
// after since.
func takeover(all map[string][]interval, keys []informer.Key, from string, since time.Time) (time.Duration, error) {
	var longest time.Duration
	for _, key := range keys {
		found := false
		for _, iv := range all[key.String()] {
			if iv.member != from && !iv.start.Before(since) {
				longest, found = max(longest, iv.end.Sub(since)), true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%s, moved from %s, was never reconciled by another member", key, from)
		}
	}
	return longest, nil
}

// awaitConverged waits until n members are live, every object carries
// the label its ring owner among them says, none drains, and each live
// member's cache holds exactly its objects. It returns the owners.
func awaitConverged(ctx context.Context, a api, f *fleet, n, objects int, guard time.Duration) (map[informer.Key]string, error) {
	deadline := time.Now().Add(guard) // against hanging, not a timing
	// A look LISTs every object once the caches add up (below): at
	// 30,000 that is work for the API server too, so look less often the
	// more there are.
	every := max(250*time.Millisecond, time.Duration(objects)*50*time.Microsecond)
	for {
		if err := f.failure(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not converged on %d members within %v (live: %d)", n, guard, len(f.members()))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
		live := f.members()
		if len(live) != n {
			continue
		}
		// Converged, each live member caches exactly its objects, so the
		// caches add up to all of them: until they do, a LIST of every
		// object would only take the API server's time from the moves.
		caches := latestCaches(f.snapshot())
		cached := 0
		for id := range live {
			cached += caches[id].objects
		}
		if cached != objects {
			continue
		}
		owners, draining, err := a.owners(ctx)
		if err != nil || draining || len(owners) != objects {
			continue
		}
		ids := make([]string, 0, n)
		for id := range live {
			ids = append(ids, id)
		}
		r, err := sharding.NewRing(ids, 0)
		if err != nil {
			return nil, err
		}
		held := map[string]int{}
		ok := true
		for key, owner := range owners {
			ok = ok && owner == r.Owner(key.Namespace+"/"+key.Name)
			held[owner]++
		}
		caches = latestCaches(f.snapshot())
		for id := range live {
			ok = ok && caches[id].objects == held[id]
		}
		if ok {
			return owners, nil
		}
	}
}

// cacheReport is a member's last "cache" line.
type cacheReport struct {
	objects   int
	heap      uint64 // the process's live heap
	cacheHeap int64  // its growth since the member's term began
}

func latestCaches(events []event) map[string]cacheReport {
	out := map[string]cacheReport{}
	for _, ev := range events {
		if ev.kind == "cache" {
			n, _ := strconv.Atoi(ev.fields[1])
			h, _ := strconv.ParseUint(ev.fields[2], 10, 64)
			c, _ := strconv.ParseInt(ev.fields[3], 10, 64)
			out[ev.fields[0]] = cacheReport{objects: n, heap: h, cacheHeap: c}
		}
	}
	return out
}

// checkShares fails unless each live member caches 0.8/N to 1.2/N of the
// objects; it returns the counts for the report.
func checkShares(f *fleet, objects int) (map[string]cacheReport, error) {
	live := f.members()
	caches := latestCaches(f.snapshot())
	fair := float64(objects) / float64(len(live))
	out := map[string]cacheReport{}
	for id := range live {
		c := caches[id]
		out[id] = c
		if float64(c.objects) < 0.8*fair || float64(c.objects) > 1.2*fair {
			return out, fmt.Errorf("%s caches %d objects, outside 0.8–1.2 × %.0f", id, c.objects, fair)
		}
	}
	return out, nil
}
