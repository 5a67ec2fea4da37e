package sharedinformer_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// A key blocked for one reason against a real API server: its reconcile
// writes as a user RBAC gives no role, and is refused 403 on every retry.
// workqueue.Run's default log says so once at level Warn; each retry
// after that is at level Debug, not another warning.
func TestAKeyBlockedByA403IsLoggedOnceNotOnEveryRetry(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	viewer, err := cp.ConfigAs("viewer")
	require.NoError(t, err)
	client, err := testenv.CoreV1Client(viewer)
	require.NoError(t, err)

	var buf testlog.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))

	limiter, err := workqueue.NewExponentialRateLimiter[informer.Key](time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	queue := workqueue.New(workqueue.Options[informer.Key]{RateLimiter: limiter})
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		workqueue.Run(ctx, queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			calls.Add(1)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name}}
			return workqueue.Result{}, client.Post().Namespace(key.Namespace).Resource("configmaps").Body(cm).Do(ctx).Error()
		}, workqueue.RunOptions[informer.Key]{})
	})
	queue.Add(informer.Key{Namespace: ns, Name: "blocked"})
	require.Eventually(t, func() bool { return calls.Load() >= 6 }, time.Minute, 5*time.Millisecond)
	cancel()
	wg.Wait()

	log := buf.String()
	assert.Equal(t, 1, strings.Count(log, `level=WARN msg="workqueue: reconcile failed; retrying" key=`+ns+`/blocked err="configmaps is forbidden`), log)
	assert.GreaterOrEqual(t, strings.Count(log, `level=DEBUG msg="workqueue: reconcile failed again, as before; retrying" key=`+ns+`/blocked err="configmaps is forbidden`), 4, log)
}
