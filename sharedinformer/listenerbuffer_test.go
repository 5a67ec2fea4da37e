package sharedinformer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/internal/testlog"
)

// bufCap returns the capacity of l's buffer.
func (l *listener[T]) bufCap() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.cap()
}

// A handler's own buffer grows to hold a burst its handler is too slow
// for, and gives the memory back once the burst has drained: the
// listener, not only the ring it is built on, shrinks.
func TestAHandlersBufferGrowsForABurstAndShrinksBackAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		l := startListener(t, HandlerFuncs[*corev1.Pod]{AddFunc: func(*corev1.Pod, bool) { <-release }},
			BufferPolicy{InitialSize: 8}, nil, nil)
		for i := range 1000 {
			l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod(fmt.Sprint(i))})
		}
		synctest.Wait() // the handler is in its call on the first
		assert.Equal(t, 999, l.depth())
		assert.GreaterOrEqual(t, l.bufCap(), 999, "the buffer grew to hold the burst")

		close(release)
		synctest.Wait()
		assert.Zero(t, l.depth())
		assert.Equal(t, 8, l.bufCap(), "the burst drained: the buffer is back to its initial size")
	})
}

// The warning that a handler is falling behind is logged once more than
// WarnDepth notifications wait for it, not at WarnDepth, and once for
// the burst, however long it goes on.
func TestAHandlerFallingBehindIsWarnedOfOncePastWarnDepth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		release := make(chan struct{}, 100) // one token lets one call return
		l := newListener("slow", Handler[*corev1.Pod](HandlerFuncs[*corev1.Pod]{AddFunc: func(*corev1.Pod, bool) { <-release }}),
			HandlerOptions{}, BufferPolicy{WarnDepth: 3}.withDefaults(), nil, func(error) {}, slog.New(slog.NewTextHandler(&buf, nil)))
		ctx, cancel := context.WithCancel(t.Context())
		l.start(ctx, new(sync.WaitGroup))
		add := func(name string) { l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod(name)}) }

		add("a")
		synctest.Wait() // the handler is in its call on a: nothing waits
		for _, name := range []string{"b", "c", "d"} {
			add(name)
		}
		require.Equal(t, 3, l.depth())
		assert.Empty(t, buf.String(), "WarnDepth notifications waiting is no warning yet")

		add("e")
		assert.Equal(t, 1, strings.Count(buf.String(), "\n"), buf.String())
		assert.Contains(t, buf.String(), "level=WARN")
		assert.Contains(t, buf.String(), "handler=slow waiting=4 warnDepth=3")

		add("f")
		assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "once per burst: %s", buf.String())

		// The burst drains; the next one past WarnDepth is warned of again.
		for range 6 {
			release <- struct{}{}
		}
		synctest.Wait()
		require.Equal(t, 0, l.depth())
		add("g")
		synctest.Wait() // in its call on g
		for _, name := range []string{"h", "i", "j", "k"} {
			add(name)
		}
		assert.Equal(t, 2, strings.Count(buf.String(), "\n"), "a second burst is warned of: %s", buf.String())

		cancel()
		close(release)
		<-l.done
	})
}
