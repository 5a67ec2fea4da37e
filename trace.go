package informer

import (
	"fmt"
	"strings"
	"time"
)

// Stage names the part of the pipeline that emitted a [TraceEvent], in the
// order a change travels through them.
type Stage string

const (
	StageReflector Stage = "reflector" // LIST, WATCH, bookmarks, relists
	StageFIFO      Stage = "deltafifo" // deltas queued, coalesced, replaced, popped
	StageIndexer   Stage = "indexer"   // objects stored, index values changed
	StageListener  Stage = "listener"  // handler deliveries, buffer depth
	StageWorkqueue Stage = "workqueue" // keys added, deduplicated, requeued, done
	StageGuard     Stage = "guard"     // keys held until the cache shows their own writes
)

// TraceEvent is one thing one stage did. It is deliberately small and not
// generic, so that a single [TraceHook] can follow a change through every
// stage, and so that printing, metrics and tests all read the same record.
//
// Each package documents the Kind values it emits as constants.
type TraceEvent struct {
	Stage Stage
	// Kind says what happened, in the stage's own words: "list", "queued",
	// "delivered", "requeued", ...
	Kind string
	// Key is the object's key in text form (see Key.String), or "" for an
	// event about no single object, such as a LIST.
	Key string
	// ResourceVersion is the object's or the list's resourceVersion, when
	// the event has one.
	ResourceVersion string
	// Detail is free text for a human: why a relist happened, a buffer
	// depth, an error.
	Detail string
	// Reason is a short token from a fixed set, for machines (a metric's
	// label, a test's assertion), where Detail is for people: a relist's
	// cause, such as "expired". Empty for kinds that have none; each
	// package documents the values it uses.
	Reason string
	// Time is when the event happened; Emit sets it if the emitter did not.
	Time time.Time
}

// String formats the event as one aligned line, for logs and examples:
//
//	reflector  watch-event  default/cm-1  rv=1042  ADDED
func (e TraceEvent) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s  %s", e.Stage, e.Kind)
	if e.Key != "" {
		b.WriteString("  " + e.Key)
	}
	if e.ResourceVersion != "" {
		b.WriteString("  rv=" + e.ResourceVersion)
	}
	if e.Detail != "" {
		b.WriteString("  " + e.Detail)
	}
	return b.String()
}

// TraceHook receives the trace events of every stage it is given to. It is
// called synchronously on the goroutine doing the work, so it must be quick
// and must not call back into the stage that called it; a hook that needs
// to do slow work should hand events to a goroutine of its own.
//
// A nil TraceHook is valid and means "no tracing": every stage accepts one
// as an option, and Emit on a nil hook does nothing.
type TraceHook func(TraceEvent)

// Emit delivers e to h, setting e.Time to now if it is zero. It is a no-op
// on a nil hook.
func (h TraceHook) Emit(e TraceEvent) {
	if h == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	h(e)
}

// Tee returns a hook that delivers each event to every non-nil hook in
// order, such as a printer and a metrics collector. It returns nil when all
// of them are nil, so tracing stays free when nobody listens.
func Tee(hooks ...TraceHook) TraceHook {
	var live []TraceHook
	for _, h := range hooks {
		if h != nil {
			live = append(live, h)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(e TraceEvent) {
		for _, h := range live {
			h(e)
		}
	}
}
