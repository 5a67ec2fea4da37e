package sharedinformer

import (
	"context"
	"errors"
	"sync"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// Run starts the informer and blocks until ctx ends. It may be called
// once. Three kinds of goroutine run meanwhile:
//
//	reflector         LIST, then WATCH ──▶ DeltaFIFO (through the transform)
//	Run's own         Pop ──▶ indexer ──▶ every handler's buffer
//	one per handler   buffer ──▶ OnAdd / OnUpdate / OnDelete
//
// When ctx ends, Run waits for all of them: it returns after every
// handler's current call has returned. Notifications still buffered are
// dropped, so that is at most one call per handler. Handlers cannot be
// added from then on.
func (i *Informer[T]) Run(ctx context.Context) error {
	r, err := i.start(ctx)
	if err != nil {
		return err
	}
	var background sync.WaitGroup
	background.Go(func() { _ = r.Run(ctx) })

	for ctx.Err() == nil {
		err := i.fifo.Pop(ctx, i.process)
		if err != nil && ctx.Err() == nil {
			i.report(err) // a rejected change: dropped alone, the rest go on
		}
		i.checkSynced()
	}

	background.Wait()
	i.fifo.Close()
	i.mu.Lock()
	i.stopping = true
	i.mu.Unlock()
	i.listenersRunning.Wait()
	return nil
}

// start records ctx as the run context, starts the handlers registered so
// far, and builds the reflector.
func (i *Informer[T]) start(ctx context.Context) (*reflector.Reflector[T], error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.runCtx != nil {
		return nil, errors.New("sharedinformer: Run called twice")
	}
	if i.stopping {
		return nil, errors.New("sharedinformer: Run of an informer released by its last holder: ask InformerFor for a fresh one")
	}
	for _, l := range i.listeners {
		if l.resyncPeriod > 0 && (i.resyncCheck == 0 || l.resyncPeriod < i.resyncCheck) {
			i.resyncCheck = l.resyncPeriod
		}
	}
	r, err := reflector.New(reflector.Options[T]{
		ListerWatcher: i.opts.ListerWatcher,
		Store:         &store[T]{i: i, transform: i.transform}, // fixed from now on: SetTransform fails after Run
		Name:          i.name,
		Tuning:        i.opts.Reflector,
		ResyncPeriod:  i.resyncCheck,
		Clock:         i.opts.Clock,
		Trace:         i.opts.Trace,
		OnError:       i.reflectorFailed,
		Served:        i.opts.Served,
	})
	if err != nil {
		return nil, err
	}
	i.reflector.Store(r)
	i.runCtx = ctx
	for _, l := range i.listeners {
		i.startListenerLocked(l)
	}
	return r, nil
}

// reflectorFailed keeps the reflector's failure for the sync wait's
// report, then passes it to OnError, or logs it as a warning: the
// reflector retries it.
func (i *Informer[T]) reflectorFailed(err error) {
	i.lastFailure.Store(&err)
	if i.opts.OnError != nil {
		i.opts.OnError(err)
		return
	}
	if errors.Is(err, reflector.ErrNotServed) {
		i.logger.Warn("the resource is no longer served; no request until discovery lists it again", "informer", i.name, "err", err)
		return
	}
	var moved *reflector.VersionNotServedError
	if errors.As(err, &moved) {
		i.logger.Warn("the informer's version is no longer served, but the resource is: the cache keeps its objects, unwatched; read a served version", "informer", i.name, "served", moved.Served, "err", err)
		return
	}
	i.logger.Warn("reflector failed; retrying", "informer", i.name, "err", err)
}

// checkSynced closes Synced once the DeltaFIFO has synced, and tells every
// handler that no more of its initial list will come.
func (i *Informer[T]) checkSynced() {
	if i.isSynced() || !i.fifo.HasSynced() {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.syncedOnce.Do(func() { close(i.synced) })
	for _, l := range i.listeners {
		l.markUpstreamSynced()
	}
}

// store is what the reflector writes into: the DeltaFIFO, behind the
// transform, with resync deciding which handlers are due.
type store[T informer.Object] struct {
	i         *Informer[T]
	transform func(T) (T, error) // nil for none
	shared    interner           // the values cached objects repeat, kept once
}

// Add, Update, Delete and Replace hand the reflector's writes to the
// DeltaFIFO through the transform. A rejected object (see transformed) is
// already reported, so they return nil for it: the reflector reports
// errors too, and one rejection is one report.

func (s *store[T]) Add(obj T) error {
	if transformed, err := s.transformed(obj); err == nil {
		return s.i.fifo.Add(transformed)
	}
	return s.i.fifo.Bookmark(obj.GetResourceVersion()) // none cached, none queued; the watch moved on
}

func (s *store[T]) Update(obj T) error {
	if transformed, err := s.transformed(obj); err == nil {
		return s.i.fifo.Update(transformed)
	}
	return s.i.fifo.Bookmark(obj.GetResourceVersion()) // the cache keeps the version it had
}

// Bookmark passes the watch's progress to the DeltaFIFO, which counts it
// once everything queued before it is applied.
func (s *store[T]) Bookmark(resourceVersion string) error { return s.i.fifo.Bookmark(resourceVersion) }

// Delete deletes even an object the transform rejects, as the last known
// version of it (which the transform accepted): the server no longer has
// it, and the cache must not keep it. The delete's own resourceVersion
// follows as a bookmark, so that once the delete is applied the cache
// says it is at the delete, as for any other change
// (TestADeleteWhoseFinalStateTheTransformRejectsMovesTheAppliedResourceVersionToTheDelete).
func (s *store[T]) Delete(obj T) error {
	transformed, err := s.transformed(obj)
	if err == nil {
		return s.i.fifo.Delete(transformed)
	}
	key, kerr := informer.KeyOf(obj)
	if kerr != nil {
		return kerr
	}
	if last, ok := s.i.fifo.LastKnown(key); ok {
		if err := s.i.fifo.Delete(last); err != nil {
			return err
		}
	}
	return s.i.fifo.Bookmark(obj.GetResourceVersion())
}

// Replace transforms the list and hands it to the DeltaFIFO (see
// transformedList).
func (s *store[T]) Replace(objs []T, resourceVersion string) error {
	objs, err := s.transformedList(objs)
	if err != nil {
		return err
	}
	if err := s.i.fifo.Replace(objs, resourceVersion); err != nil {
		return err
	}
	s.i.checkSynced() // an empty first list syncs with nothing to pop
	return nil
}

// BeginReplace, ReplacePart, FinishReplace and Empty make the store a
// reflector.PartStore: a list handed to the DeltaFIFO part by part as the
// reflector reads it, each part through the transform.

func (s *store[T]) BeginReplace() error { return s.i.fifo.BeginReplace() }

func (s *store[T]) ReplacePart(objs []T) error {
	objs, err := s.transformedList(objs)
	if err != nil {
		return err
	}
	return s.i.fifo.ReplacePart(objs)
}

// WaitForRoom makes the store a reflector.RoomWaiter: a list waits while
// the informer is behind with what it has queued.
func (s *store[T]) WaitForRoom(ctx context.Context) error { return s.i.fifo.WaitForRoom(ctx) }

// Empty deletes every object, cached or queued, without counting as a
// list: an informer that has not synced stays unsynced.
func (s *store[T]) Empty() error { return s.i.fifo.Empty() }

func (s *store[T]) FinishReplace(resourceVersion string) error {
	if err := s.i.fifo.FinishReplace(resourceVersion); err != nil {
		return err
	}
	s.i.checkSynced() // an empty first list syncs with nothing to pop
	return nil
}

// transformedList transforms the objects of a list, or of a part of one,
// and shares what they repeat (see transformed).
// In place of an object the transform rejects it puts the last known
// version, if any and if it is the same object: left out, the object
// would become a delete whose final state is unknown for an object the
// server still has. A last known version of another UID is an object the
// server deleted, its name since taken by the rejected one: it is left
// out, so the relist deletes it and caches nothing under the key, as the
// watch's DELETE and rejected ADD would
// (TestARelistFindingARejectedObjectOfANewUIDDoesNotKeepTheDeletedObject).
// The list is otherwise kept whole, since a Replace that failed would
// have to be relisted.
func (s *store[T]) transformedList(objs []T) ([]T, error) {
	if s.transform == nil {
		for _, obj := range objs {
			s.shared.share(obj)
		}
		return objs, nil
	}
	kept := make([]T, 0, len(objs))
	for _, obj := range objs {
		t, err := s.transformed(obj)
		if err != nil {
			key, kerr := informer.KeyOf(obj)
			if kerr != nil {
				return nil, kerr
			}
			if t, ok := s.i.fifo.LastKnown(key); ok && !replacedByAnother(t, obj) {
				kept = append(kept, t)
			}
			continue
		}
		kept = append(kept, t)
	}
	return kept, nil
}

// Resync picks the handlers whose resync period has elapsed and, if any,
// asks the DeltaFIFO to replay the cache; the Sync deltas reach only
// those handlers. A handler is due once its period has passed since its
// last resync (or its registration), never sooner: between two of its
// resyncs lie at least its period and, while the reflector watches, at
// most its period plus one resync check period (the reflector's tick,
// armed again after each resync), as in client-go; a tick that comes
// during a LIST waits for the list to end, however long
// (TestAResyncDueDuringAListWaitsForTheListToEnd). A replay still being popped when the next resync comes
// reaches the handlers it was for: the DeltaFIFO numbers its resyncs,
// and each handler found due is recorded under the number of the resync
// that will remind it (dueAt, read by process).
func (s *store[T]) Resync() error {
	i := s.i
	// The number the DeltaFIFO gives the Resync below: the reflector's
	// goroutine is its only caller, so none comes between.
	n := i.fifo.Resyncs() + 1
	i.mu.Lock()
	now := i.opts.Clock.Now()
	var due []*listener[T]
	for _, l := range i.listeners {
		if l.resyncPeriod > 0 && !now.Before(l.nextResync) {
			due = append(due, l)
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	if len(due) > 0 {
		i.recordDue(n, due)
	}
	i.mu.Unlock()
	if len(due) == 0 {
		return nil
	}
	return i.fifo.Resync()
}
