package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// recorder is the one TraceHook this example gives to every stage. The hook
// runs on the goroutine doing the work, often under that stage's lock, so it
// only appends to a slice; a printer goroutine formats and writes the lines.
// The slice is also what the example reads afterwards to tell you, honestly,
// what happened (did a relist come? was a delete's final state unknown?).
type recorder struct {
	start  time.Time
	prefix string // "namespace/", stripped from keys so the columns stay narrow

	mu      sync.Mutex
	entries []entry // guarded by mu; append-only
	muted   bool    // guarded by mu; set by mute: events are dropped from then on
}

// entry is a trace event, or a line of narration when note is set.
type entry struct {
	ev   informer.TraceEvent
	note string
}

func newRecorder(namespace string) *recorder {
	return &recorder{start: time.Now(), prefix: namespace + "/"}
}

// hook is the informer.TraceHook. The reflector's "rv" events (one per
// change, repeating the watch event's resourceVersion) are left out as noise.
func (r *recorder) hook(e informer.TraceEvent) {
	if e.Stage == informer.StageReflector && e.Kind == reflector.KindResourceVersion {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.mu.Lock()
	if !r.muted {
		r.entries = append(r.entries, entry{ev: e})
	}
	r.mu.Unlock()
}

// mute drops trace events from now on, so the shutdown does not trail after
// the last words.
func (r *recorder) mute() {
	r.mu.Lock()
	r.muted = true
	r.mu.Unlock()
}

// say adds a line of narration, printed in order with the trace.
func (r *recorder) say(format string, args ...any) {
	r.mu.Lock()
	r.entries = append(r.entries, entry{note: fmt.Sprintf(format, args...)})
	r.mu.Unlock()
}

// mark returns a position in the record, to search from later.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

// find returns the first event at or after position from that matches.
func (r *recorder) find(from int, match func(informer.TraceEvent) bool) (informer.TraceEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, en := range r.entries[min(from, len(r.entries)):] {
		if en.note == "" && match(en.ev) {
			return en.ev, true
		}
	}
	return informer.TraceEvent{}, false
}

// count returns how many events at or after position from match.
func (r *recorder) count(from int, match func(informer.TraceEvent) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, en := range r.entries[min(from, len(r.entries)):] {
		if en.note == "" && match(en.ev) {
			n++
		}
	}
	return n
}

// waitFor waits until an event after from matches, or d passes.
func (r *recorder) waitFor(ctx context.Context, from int, d time.Duration, match func(informer.TraceEvent) bool) (informer.TraceEvent, error) {
	deadline := time.Now().Add(d)
	for {
		if e, ok := r.find(from, match); ok {
			return e, nil
		}
		if time.Now().After(deadline) {
			return informer.TraceEvent{}, fmt.Errorf("waited %v for a trace event that did not come", d)
		}
		select {
		case <-ctx.Done():
			return informer.TraceEvent{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// is returns a matcher for one stage, kind and (short) key.
func (r *recorder) is(stage informer.Stage, kind, name string) func(informer.TraceEvent) bool {
	return func(e informer.TraceEvent) bool {
		return e.Stage == stage && e.Kind == kind && (name == "" || r.short(e.Key) == name)
	}
}

// print writes every entry from position from on, until stop is closed and
// everything recorded has been written. It returns where it stopped.
func (r *recorder) print(out io.Writer, stop <-chan struct{}) {
	next := 0
	for {
		r.mu.Lock()
		batch := r.entries[next:]
		next = len(r.entries)
		r.mu.Unlock()
		for _, en := range batch {
			fmt.Fprintln(out, r.format(en))
		}
		select {
		case <-stop:
			r.mu.Lock()
			rest := r.entries[next:]
			r.mu.Unlock()
			for _, en := range rest {
				fmt.Fprintln(out, r.format(en))
			}
			return
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// format lays an event out in columns: time since start, stage, kind, key,
// resourceVersion, detail. Narration lines stand out with no columns.
func (r *recorder) format(en entry) string {
	if en.note != "" {
		return en.note
	}
	e := en.ev
	rv := ""
	if e.ResourceVersion != "" {
		rv = "rv=" + e.ResourceVersion
	}
	line := fmt.Sprintf("%+8.3fs  %-9s  %-13s  %-8s  %-9s  %s",
		e.Time.Sub(r.start).Seconds(), e.Stage, e.Kind, r.short(e.Key), rv, e.Detail)
	return strings.TrimRight(line, " ")
}

func (r *recorder) short(key string) string { return strings.TrimPrefix(key, r.prefix) }

// summary counts, per key, what each stage did with it: the place to see
// coalescing at a glance (more watch events than pops, more adds than
// reconciles).
func (r *recorder) summary(out io.Writer, names ...string) {
	type row struct{ events, queued, popped, stored, delivered, added, dedup, got int }
	rows := map[string]*row{}
	for _, n := range names {
		rows[n] = &row{}
	}
	r.mu.Lock()
	for _, en := range r.entries {
		x, ok := rows[r.short(en.ev.Key)]
		if en.note != "" || !ok {
			continue
		}
		switch e := en.ev; e.Stage + informer.Stage(":"+e.Kind) {
		case "reflector:watch-event":
			x.events++
		case "deltafifo:queued":
			x.queued++
		case "deltafifo:popped":
			x.popped++
		case "indexer:stored", "indexer:deleted":
			x.stored++
		case "listener:delivered":
			x.delivered++
		case "workqueue:added":
			x.added++
		case "workqueue:deduplicated", "workqueue:postponed":
			x.dedup++
		case "workqueue:got":
			x.got++
		}
	}
	r.mu.Unlock()
	fmt.Fprintf(out, "  %-8s  %12s  %13s  %6s  %15s  %10s  %15s  %10s\n",
		"key", "watch events", "deltas queued", "popped", "cache writes", "delivered", "workqueue adds", "reconciles")
	for _, n := range names {
		x := rows[n]
		fmt.Fprintf(out, "  %-8s  %12d  %13d  %6d  %15d  %10d  %15s  %10d\n", n, x.events, x.queued, x.popped,
			x.stored, x.delivered, fmt.Sprintf("%d (+%d merged)", x.added, x.dedup), x.got)
	}
}
