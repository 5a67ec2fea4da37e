package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// Start runs every informer made so far that is not running yet, each in
// a goroutine, until ctx ends or its last holder releases it (see
// Release). Call it again for informers made later.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retireEndedLocked() // they stopped for good: InformerFor makes fresh ones
	for key, h := range f.informers {
		if h.stop != nil {
			continue
		}
		runCtx, stop := context.WithCancelCause(ctx) // Release stops this one alone
		h.stop, h.ctx = stop, runCtx
		f.started, f.retiredSome = true, false
		f.running.Go(func() {
			defer f.stopped(key, h)
			defer h.inf.afterRun()
			defer stop(nil)
			if err := h.inf.Run(runCtx); err != nil {
				f.report(err)
			}
		})
	}
}

// WaitForCacheSync waits until every started informer has synced, and
// each of handlers (Registrations) has handled its initial list, and
// returns nil; or returns a *NotSyncedError naming each one that has not,
// with its informer's last failure (a 403, a 404), once ctx ends or
// FactoryOptions.SyncTimeout (default 2 minutes) has passed, whichever is
// first. That default bound is what it adds to the package-level
// [WaitForCacheSync], which only ctx bounds. An informer released by its
// last holder, before or during the wait, is not waited for, nor are its
// handlers. It returns an error at once if Start has started no informer,
// whatever handlers it is given
// (TestAFactoryWaitGivenHandlersButNoStartFailsAtOnce), and, with no
// informer running, if one was made after the last Start and never
// started
// (TestAReusedFactoryWhoseLastTermReleasedItsInformerDoesNotCallAnUnstartedSuccessorSynced;
// with one running, the started ones are waited for:
// TestAControllersWaitIsNotRefusedForAnotherControllersInformerNotStartedYet).
// An informer that stopped because the ctx given to Start ended is not
// counted by a wait that begins after, nor are its handlers: its cache
// will never move again; if no informer runs since, that is the error
// (TestAFactoryWaitOnAnInformerStoppedWithStartsContextIsAnError,
// TestAFactoryWaitAfterATermReleasedItsStoppedInformerIsAnError). A wait
// already underway when that ctx ends still waits for it, until it syncs
// or the wait's bound passes.
func (f *Factory) WaitForCacheSync(ctx context.Context, handlers ...Syncer) error {
	f.mu.Lock()
	f.retireEndedLocked() // a cache that stopped following the server is never counted
	syncers := handlers
	var unstarted []string
	for _, h := range f.informers {
		if h.stop != nil {
			syncers = append(syncers, h.inf)
		} else {
			unstarted = append(unstarted, h.inf.Name())
		}
	}
	running := len(syncers) > len(handlers)
	started, retired := f.started, f.retiredSome
	f.mu.Unlock()
	// With an informer running, the wait is for the started ones (others
	// may be made meanwhile, by another controller on this factory:
	// TestAControllersWaitIsNotRefusedForAnotherControllersInformerNotStartedYet).
	// With none, handlers of informers that never ran would be waited for
	// until SyncTimeout, and a cache that stopped would be called synced;
	// a released one's handlers (started once) are not waited for.
	if !running {
		slices.Sort(unstarted)
		switch {
		case !started:
			return errors.New("sharedinformer: Factory.WaitForCacheSync with no started informer: call Start first")
		case len(unstarted) > 0:
			return fmt.Errorf("sharedinformer: Factory.WaitForCacheSync: the informers of %s were made after the last Start and never started: call Start again", strings.Join(unstarted, "; "))
		case retired:
			return errors.New("sharedinformer: Factory.WaitForCacheSync with no informer running: those Start ran stopped when its ctx ended; ask InformerFor again for fresh ones and call Start")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.SyncTimeout)
	defer cancel()
	return WaitForCacheSync(ctx, syncers...)
}

// Wait blocks until every informer Start started has stopped, which
// happens once the ctx given to Start ends. A stopped informer has given
// its metrics' names back to FactoryOptions.Metrics, so a factory made
// afterwards (for a leader's next term, say) may register them again. It returns at once if Start
// was never called; it does not depend on a sync wait having run.
func (f *Factory) Wait() { f.running.Wait() }

func (f *Factory) report(err error) {
	if f.opts.OnError != nil {
		f.opts.OnError(err)
		return
	}
	logger := f.opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("informer factory", "err", err)
}
