package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
)

func parseUint(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// steady measures one fixed workload: s.replicas members and one
// sharder of their own (so the members' heaps hold no sharder cache),
// for s.duration after convergence. It prints one row of the scale-out
// table: reconciles per second per member, objects and heap per member.
func steady(ctx context.Context, s settings, f *fleet, a api, out io.Writer) error {
	if _, err := f.start("sharder", false, true); err != nil {
		return err
	}
	for i := range s.replicas {
		if _, err := f.start(fmt.Sprintf("r%d", i+1), true, false); err != nil {
			return err
		}
	}
	if _, err := awaitConverged(ctx, a, f, s.replicas, s.objects, guard); err != nil {
		return err
	}
	from := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.duration):
	}
	to := time.Now()
	counts := map[string]int{}
	for _, ev := range f.snapshot() {
		if ev.kind == "E" && ev.at.After(from) && ev.at.Before(to) {
			counts[ev.fields[0]]++
		}
	}
	caches := latestCaches(f.snapshot())
	total := 0
	for id := range f.members() {
		c := caches[id]
		total += counts[id]
		fmt.Fprintf(out, "  %s: %.1f reconciles/s, %d objects cached, live heap %.1f MiB, %.1f MiB of it since its term began\n",
			id, float64(counts[id])/to.Sub(from).Seconds(), c.objects, mib(c.heap), mib(c.cacheHeap))
	}
	for _, ev := range f.snapshot() {
		if ev.kind == "heap" {
			caches["sharder"] = cacheReport{heap: parseUint(ev.fields[1])}
		}
	}
	fmt.Fprintf(out, "  the sharder (metadata of all %d objects): live heap %.1f MiB\n", s.objects, mib(caches["sharder"].heap))
	fmt.Fprintf(out, "steady: %d members, %.1f reconciles/s in all over %v\n", s.replicas, float64(total)/to.Sub(from).Seconds(), s.duration)
	return nil
}
