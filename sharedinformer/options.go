package sharedinformer

import (
	"fmt"
	"time"
)

// MinimumResyncPeriod is the shortest resync period a handler may ask for.
// A resync replays the whole cache to the handler; more often than this
// is almost certainly a mistake that would keep workers busy for nothing.
const MinimumResyncPeriod = time.Second

// HandlerOptions configure one registration.
type HandlerOptions struct {
	// Name identifies the handler in traces, logs and panic reports.
	// Default: "handler-N", numbered in registration order.
	Name string
	// ResyncPeriod is how often the handler is reminded of every cached
	// object, as OnUpdate(obj, obj). It makes no API call (pitfall 6).
	// 0 means never; otherwise at least MinimumResyncPeriod. Default: 0.
	ResyncPeriod time.Duration
}

func (o HandlerOptions) validate() error {
	if o.ResyncPeriod != 0 && o.ResyncPeriod < MinimumResyncPeriod {
		return fmt.Errorf("resync period %v of handler %q is below the minimum %v (use 0 for no resync)", o.ResyncPeriod, o.Name, MinimumResyncPeriod)
	}
	return nil
}

// BufferPolicy shapes the buffer each handler has between the informer's
// pop loop and the handler's goroutine. The buffer always grows as needed,
// so a slow handler never blocks the informer or other handlers; this
// policy only sets how big it starts and when it complains.
type BufferPolicy struct {
	// InitialSize is the capacity a buffer starts with and shrinks back
	// to once a burst has drained. Default: 1024.
	InitialSize int
	// WarnDepth: once more notifications than this wait for one handler,
	// a warning is logged and a KindBufferWarning trace event emitted,
	// once per burst. Default: 10000.
	WarnDepth int
}

func (p BufferPolicy) withDefaults() BufferPolicy {
	if p.InitialSize <= 0 {
		p.InitialSize = 1024
	}
	if p.WarnDepth <= 0 {
		p.WarnDepth = 10000
	}
	return p
}
