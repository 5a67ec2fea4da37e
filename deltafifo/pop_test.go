package deltafifo_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

type deltas = deltafifo.Deltas[*corev1.ConfigMap]

func TestPopBlocksUntilAKeyIsQueued(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	got := make(chan string)
	go func() {
		_ = f.Pop(context.Background(), func(k informer.Key, _ deltas, _ bool) error {
			got <- k.String()
			return nil
		})
	}()
	select {
	case k := <-got:
		t.Fatalf("Pop returned %s from an empty queue", k)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, f.Add(cm("a", "1")))
	assert.Equal(t, "default/a", <-got)
}

func TestPopReturnsTheContextErrorWhenTheContextEnds(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Pop(ctx, func(informer.Key, deltas, bool) error { return nil }) }()
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("Pop did not return after its context was cancelled")
	}
}

func TestCloseWakesEveryBlockedPop(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() { errs <- f.Pop(context.Background(), func(informer.Key, deltas, bool) error { return nil }) })
	}
	time.Sleep(20 * time.Millisecond) // let them block; correctness does not depend on it
	f.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, deltafifo.ErrClosed)
	}
}

func TestPopDrainsWhatWasQueuedBeforeCloseAndWritesAfterCloseFail(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "1")))
	f.Close()
	assert.ErrorIs(t, f.Add(cm("b", "2")), deltafifo.ErrClosed)
	assert.ErrorIs(t, f.Replace(nil, "2"), deltafifo.ErrClosed)
	assert.Equal(t, "default/a", popOne(t, f, nil).Key, "nothing accepted before Close is dropped")
	err := f.Pop(context.Background(), func(informer.Key, deltas, bool) error { return nil })
	assert.ErrorIs(t, err, deltafifo.ErrClosed)
}

func TestAProcessErrorIsReturnedAndTheDeltasAreDropped(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "1")))
	boom := errors.New("boom")
	err := f.Pop(context.Background(), func(informer.Key, deltas, bool) error { return boom })
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "default/a")
	assert.Zero(t, f.Len())
}

func TestAProcessErrorWrappingErrRequeuePutsTheDeltasBackAtTheFront(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "2")}, "2"))
	err := f.Pop(context.Background(), func(informer.Key, deltas, bool) error {
		return errors.Join(deltafifo.ErrRequeue, errors.New("cache busy"))
	})
	assert.ErrorIs(t, err, deltafifo.ErrRequeue)
	assert.False(t, f.HasSynced(), "a requeued key of the initial list is still unprocessed")
	assert.Equal(t, []popped{
		{"default/a", "Replaced@1", true},
		{"default/b", "Replaced@2", true},
	}, popAll(t, f, nil))
	assert.True(t, f.HasSynced())
}

func TestHasSyncedOnceEveryKeyOfTheFirstReplaceIsPopped(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	assert.False(t, f.HasSynced(), "no list yet")
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "2")}, "2"))
	require.NoError(t, f.Add(cm("c", "3"))) // after the list: not part of it
	assert.False(t, f.HasSynced())
	assert.True(t, popOne(t, f, nil).Initial)
	assert.False(t, f.HasSynced())
	assert.True(t, popOne(t, f, nil).Initial)
	assert.True(t, f.HasSynced(), "synced before the later key is popped")
	assert.False(t, popOne(t, f, nil).Initial)

	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "4")}, "4"))
	assert.False(t, popOne(t, f, nil).Initial, "only the first Replace is the initial list")
}

func TestHasSyncedAtOnceAfterAnEmptyFirstReplace(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Replace(nil, "1"))
	assert.True(t, f.HasSynced())
}

func TestBadObjectsAreErrorsNeverPanics(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	var typedNil *corev1.ConfigMap
	for name, write := range map[string]func(*corev1.ConfigMap) error{
		"Add": f.Add, "Update": f.Update, "Delete": f.Delete,
		"Replace": func(o *corev1.ConfigMap) error { return f.Replace([]*corev1.ConfigMap{o}, "1") },
	} {
		assert.ErrorContains(t, write(typedNil), "the object is nil", name)
		assert.ErrorIs(t, write(cm("", "1")), informer.ErrInvalidKey, name)
		assert.ErrorContains(t, write(cm("", "1")), name, "the error names the operation")
	}
	assert.Zero(t, f.Len())
}
