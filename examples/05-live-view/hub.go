package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// event is what the page receives for each trace event, as one SSE message.
// Stage "control" marks what you did from the page (a cut, a compaction), so
// the timeline shows cause next to effect.
type event struct {
	Seq    int    `json:"seq"`
	Ms     int64  `json:"ms"` // milliseconds since the program started
	Stage  string `json:"stage"`
	Kind   string `json:"kind"`
	Key    string `json:"key,omitempty"` // without the namespace
	RV     string `json:"rv,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// hub is the one TraceHook given to the informer and the workqueue, and the
// fan-out to every open page. The hook runs on the goroutine doing the work,
// often under that stage's lock, so it only appends and wakes the streams;
// each stream goroutine does its own JSON and network writes.
type hub struct {
	start  time.Time
	prefix string // "namespace/", stripped from keys

	mu     sync.Mutex
	events []event       // guarded by mu; the last maxKept events, Seq ascending
	wake   chan struct{} // guarded by mu; closed and replaced on every append
}

const maxKept = 5000 // a page that connects late replays at most this many

func newHub(namespace string) *hub {
	return &hub{start: time.Now(), prefix: namespace + "/", wake: make(chan struct{})}
}

// hook is the informer.TraceHook. The reflector's "rv" events repeat each
// watch event's resourceVersion, so they are left out as noise.
func (h *hub) hook(e informer.TraceEvent) {
	if e.Stage == informer.StageReflector && e.Kind == reflector.KindResourceVersion {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	h.add(event{Ms: e.Time.Sub(h.start).Milliseconds(), Stage: string(e.Stage), Kind: e.Kind,
		Key: strings.TrimPrefix(e.Key, h.prefix), RV: e.ResourceVersion, Detail: e.Detail})
}

// note records something you did, as a "control" event.
func (h *hub) note(kind, format string, args ...any) {
	h.add(event{Ms: time.Since(h.start).Milliseconds(), Stage: "control", Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

func (h *hub) add(e event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.events); n > 0 {
		e.Seq = h.events[n-1].Seq + 1
	}
	h.events = append(h.events, e)
	if len(h.events) > 2*maxKept {
		h.events = append([]event(nil), h.events[len(h.events)-maxKept:]...)
	}
	close(h.wake)
	h.wake = make(chan struct{})
}

// since returns the events with Seq >= from, and a channel closed when more come.
func (h *hub) since(from int) ([]event, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := 0
	for i < len(h.events) && h.events[i].Seq < from {
		i++
	}
	return append([]event(nil), h.events[i:]...), h.wake
}

// ServeHTTP streams the trace as server-sent events: one "data: {json}"
// message per event, history first, then live until the page goes away.
func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	next := 0 // a reconnecting EventSource says where it stopped
	if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil {
		next = id + 1
	}
	for {
		batch, wake := h.since(next)
		for _, e := range batch {
			b, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, b)
			next = e.Seq + 1
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		}
	}
}
