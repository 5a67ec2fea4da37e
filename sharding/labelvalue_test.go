package sharding_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A shard label's value may be valid as a label yet name no possible
// member: "Member_X" cannot be part of a Lease name (uppercase, an
// underscore), and member ids are DNS labels. The sharder treats it as
// no member: it gives the object to a live member, and says so once in
// its log. (Tracked as a member instead, its Lease could never be taken
// over: the create is refused with 422 at every try, and the object stays
// stranded.)
func TestAShardLabelThatCannotNameALeaseIsReassignedAndReportedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil) // it refuses a bad Lease name with 422, as kube-apiserver does
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		terms := make(chan string, 1)
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: "a",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, shard sharding.Shard) { terms <- shard.Member; <-ctx.Done() },
		}))
		wg.Go(func() { member.Run(ctx) })
		guard := time.Minute // simulated: many times what this takes
		a := receive(t, terms, guard)

		const bad = "Member_X"
		shard := sharding.Shard{Ring: ring}
		stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns, Labels: map[string]string{shard.Label(): bad}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(stray).Do(ctx).Error())

		logs := &namingWriter{word: bad, twice: make(chan struct{})}
		labelled := make(chan string, 1)
		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			sc.OnLabel = func(_ string, key informer.Key, member string) {
				if key.Name == stray.Name {
					select {
					case labelled <- member:
					default:
					}
				}
			}
		})

		select {
		case owner := <-labelled:
			require.Equal(t, a, owner, "the stray object went to the live member")
			require.Equal(t, a, labelOf(ctx, t, core, ns, stray.Name))
			require.Equal(t, 1, logs.count(), "the sharder's log names %s once:\n%s", bad, logs)
		case <-logs.twice:
			t.Fatalf("the sharder's log named %s twice before the object was reassigned:\n%s", bad, logs)
		case <-time.After(guard):
			t.Fatalf("the object labelled %s was not reassigned within %v; the sharder's log:\n%s", bad, guard, logs)
		}
	})
}

// namingWriter keeps a log and closes twice when a second line names word.
type namingWriter struct {
	word  string
	twice chan struct{}

	mu    sync.Mutex
	buf   strings.Builder // guarded by mu
	lines int             // guarded by mu; lines naming word
}

func (w *namingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(string(p), w.word) {
		if w.lines++; w.lines == 2 {
			close(w.twice)
		}
	}
	return len(p), nil
}

func (w *namingWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines
}

func (w *namingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
