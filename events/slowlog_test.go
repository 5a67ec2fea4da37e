package events

import (
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// lockProbe is a log writer that notes, for each warning, whether the
// Recorder's lock was free while it was written: a log handler may be
// slow (stderr into a full pipe), and any Eventf waits for it if the
// lock is held.
type lockProbe struct {
	r    *Recorder
	mu   sync.Mutex
	held []bool
}

func (p *lockProbe) Write(b []byte) (int, error) {
	free := p.r.mu.TryLock()
	if free {
		p.r.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = append(p.held, !free)
	return len(b), nil
}

// A create is refused and Run logs a warning; an Event is dropped and
// Eventf logs one. Neither is written while the Recorder's lock is held,
// or a slow log handler would stall every reconcile's Eventf, which
// never blocks. (Found by review: both were logged under the lock.)
func TestAWarningIsNotLoggedWhileTheRecordersLockIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{fail: func() error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
		}}
		r, _ := newTestRecorder(t, sink, Options{MaxPending: 1})
		probe := &lockProbe{r: r}
		r.opts.Logger = slog.New(slog.NewTextHandler(probe, nil))
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // refused: Run warns
		synctest.Wait()
		time.Sleep(time.Minute) // past the 10 s between warnings
		r.mu.Lock()
		r.creating = 1 // as if MaxPending were waiting (Run is idle: the queue is empty)
		r.mu.Unlock()
		require.NoError(t, r.Eventf(web, Warning, "Other", "Create", "not ours")) // dropped: Eventf warns
		r.mu.Lock()
		r.creating = 0
		r.mu.Unlock()
		synctest.Wait()
		probe.mu.Lock()
		defer probe.mu.Unlock()
		assert.Equal(t, []bool{false, false}, probe.held, "a warning was logged while the Recorder's lock was held (true)")
	})
}
