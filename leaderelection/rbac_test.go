package leaderelection_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// Under RBAC, an ordinary user with no role is refused: Run reports the
// Forbidden (errors.As sees the API's error) and logs it once, not once
// per attempt (three attempts are refused before the test stops it). Bound to a Role holding exactly leaderelection.Rules, the
// same user acquires, renews and releases.
func TestUnderRBACTheMinimalRoleIsEnoughAndItsAbsenceIsReportedAsForbidden(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{RBAC: true, Users: []string{"candidate"}})
	ns := cp.Namespace(t)
	userCfg := must(cp.ConfigAs("candidate"))

	t.Run("without a role", func(t *testing.T) {
		// Count the answers the API refused, and stop Run after three
		// of them: however slow the machine, Run has then failed three
		// attempts, and the log shows how many it reported.
		forbidden := make(chan struct{}, 64)
		refusing := rest.CopyConfig(userCfg)
		refusing.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := rt.RoundTrip(req)
				if err == nil && resp.StatusCode == http.StatusForbidden {
					select {
					case forbidden <- struct{}{}:
					default: // the test has counted enough
					}
				}
				return resp, err
			})
		}
		cfg, logs := config(t, refusing, ns, "guarded", "candidate", newTerms().callbacks("candidate", nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		for range 3 {
			select {
			case <-forbidden:
			case <-time.After(time.Minute):
				t.Fatal("no attempt was refused within a minute")
			}
		}
		cancel()
		err := <-done
		require.ErrorIs(t, err, context.Canceled)
		require.True(t, apierrors.IsForbidden(err), "Run's error carries the Forbidden: %v", err)
		require.Contains(t, err.Error(), `User "candidate"`)
		require.Equal(t, 1, countLines(logs.String(), "attempt failed"), "three refusals, logged once:\n%s", logs)
	})

	t.Run("with the minimal role", func(t *testing.T) {
		require.NoError(t, cp.Grant(t.Context(), ns, "candidate", leaderelection.Rules("guarded")))
		ts := newTerms()
		cfg, _ := config(t, userCfg, ns, "guarded", "candidate", ts.callbacks("candidate", nil))
		cfg.ReleaseOnCancel = true
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		awaitTerm(t, ts, time.Minute, "the candidate leads with the minimal role") // RBAC takes a moment to see a new binding
		time.Sleep(2 * retryPeriod)                                                // let it renew; no assertion depends on it
		cancel()
		require.NoError(t, <-done, "acquired, renewed and released with get, create and update only")
		lease := getLease(context.Background(), t, cp.Config(), ns, "guarded")
		require.Nil(t, lease.Spec.HolderIdentity, "released")
	})
}

func countLines(s, substr string) int {
	n := 0
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}
