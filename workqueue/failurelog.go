package workqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// failureLog is Run's log of failures when RunOptions.OnError is not
// set, written through slog.Default(). It says each thing once: a key
// that fails again with the same error (a ConfigMap of that name that
// belongs to someone else, retried every few minutes for hours) is logged
// at level Warn the first time and at level Debug on every retry after
// that, until its error changes, it is reconciled, or it is given up on.
// The message of each line, its level and its fields are listed in
// RunOptions.OnError's doc and in docs/07-workqueue.md.
//
// A nil *failureLog logs nothing: Run has an OnError instead.
type failureLog[K comparable] struct {
	mu sync.Mutex
	// last holds the text of the error last logged for each key that is
	// failing now; a key leaves it when it is reconciled or given up on.
	last map[K]string
}

func newFailureLog[K comparable]() *failureLog[K] {
	return &failureLog[K]{last: map[K]string{}}
}

// retried logs a failure that is retried: retry is its number (1 for the
// first retry) and delay its backoff; queued is false when the queue is
// shut down and dropped the retry. A 409 Conflict is logged at level
// Info: another writer changed the object after the cache read it, which
// is normal and mended by the retry. A panic is a bug, logged at level
// Error with its stack. Any of these, repeated with the same error text,
// goes at level Debug.
func (l *failureLog[K]) retried(key K, err error, retry int, delay time.Duration, queued bool) {
	if l == nil {
		return
	}
	attrs := []any{"key", fmt.Sprint(key), "err", err.Error()}
	level, what := slog.LevelWarn, "reconcile failed"
	if apierrors.IsConflict(err) {
		level, what = slog.LevelInfo, "conflict, the object changed since it was read"
	}
	p, panicked := errors.AsType[*PanicError](err)
	if panicked {
		level, what = slog.LevelError, "reconcile panicked"
	}
	if l.repeats(key, err) {
		level, what = slog.LevelDebug, what+" again, as before"
	} else if panicked {
		attrs = append(attrs, "stack", string(p.Stack))
	}
	then := "retrying"
	if queued {
		attrs = append(attrs, "retry", retry, "delay", delay.String())
	} else {
		then = "not retried: the queue is shut down"
	}
	slog.Default().Log(context.Background(), level, "workqueue: "+what+"; "+then, attrs...)
}

// repeats records err as key's latest error and reports whether it is
// the one logged last for key.
func (l *failureLog[K]) repeats(key K, err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	text := err.Error()
	if last, ok := l.last[key]; ok && last == text {
		return true
	}
	l.last[key] = text
	return false
}

// gaveUp logs, at level Error, that Run gave up on key: every give-up is
// logged, since each one needs a person.
func (l *failureLog[K]) gaveUp(key K, err error) {
	if l == nil {
		return
	}
	l.forget(key)
	slog.Default().Error("workqueue: reconcile failed; giving up until the key is added again", "key", fmt.Sprint(key), "err", err.Error())
}

// succeeded logs, at level Info, that a key whose failure was logged has
// been reconciled, so that the log says the failure is over.
func (l *failureLog[K]) succeeded(key K) {
	if l == nil || !l.forget(key) {
		return
	}
	slog.Default().Info("workqueue: reconciled after failing; no longer retried", "key", fmt.Sprint(key))
}

// forget drops key's record and reports whether it had one.
func (l *failureLog[K]) forget(key K) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.last[key]
	delete(l.last, key)
	return ok
}
