package leaderelection_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/kubeconfig"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// candidateEnv makes this test binary, re-executed, a candidate for the
// Lease it names (namespace/name) instead of a test run. It prints what
// happens, one event a line, with this host's wall clock in Unix ns:
//
//	identity <id>
//	leader <id>       (OnNewLeader)
//	leading <ns>      (OnStartedLeading)
//
// It stops when its stdin closes, so it never outlives the test.
const candidateEnv = "LEADERELECTION_CANDIDATE"

func runCandidateIfAsked() {
	target := os.Getenv(candidateEnv)
	if target == "" {
		return
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	fail := func(err error) { say("error %v", err); os.Exit(1) }
	ns, name, _ := strings.Cut(target, "/")
	cfg, err := kubeconfig.Flags{Path: os.Getenv("KUBECONFIG")}.Load()
	if err != nil {
		fail(err)
	}
	client, err := leaderelection.NewClient(cfg)
	if err != nil {
		fail(err)
	}
	el, err := leaderelection.New(leaderelection.Config{
		Client: client, Namespace: ns, Name: name, // Identity: the default, hostname_random
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline,
		RetryPeriod: retryPeriod, AttemptTimeout: attemptTimeout,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { say("leading %d", time.Now().UnixNano()); <-ctx.Done() },
			OnStoppedLeading: func() {},
			OnNewLeader:      func(id string) { say("leader %s", id) },
		},
	})
	if err != nil {
		fail(err)
	}
	say("identity %s", el.Identity())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	say("returned %v", el.Run(ctx))
	os.Exit(0)
}

// candidateProcess is one re-executed test binary standing for a Lease.
type candidateProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	id    string
}

// event is one line a candidate process printed.
type event struct {
	from       *candidateProcess
	kind, rest string
}

// startCandidate starts a candidate process whose lines go to events.
func startCandidate(t *testing.T, cp *testenv.ControlPlane, lease string, events chan<- event) *candidateProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), candidateEnv+"="+lease, "KUBECONFIG="+cp.KubeconfigPath())
	cmd.Stderr = os.Stderr
	stdin := must(cmd.StdinPipe())
	stdout := must(cmd.StdoutPipe())
	require.NoError(t, cmd.Start())
	p := &candidateProcess{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })

	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "the candidate printed nothing")
	id, ok := strings.CutPrefix(lines.Text(), "identity ")
	require.True(t, ok, "the candidate said: %s", lines.Text())
	p.id = id
	go func() {
		for lines.Scan() {
			kind, rest, _ := strings.Cut(lines.Text(), " ")
			events <- event{from: p, kind: kind, rest: rest}
		}
	}()
	return p
}

// Three candidate processes against kube-apiserver; the leader is
// SIGKILLed (no release, no goodbye), twice. Each time a standby leads,
// and only once the killed leader's Lease could expire: after its last
// renew the test read before the kill plus LeaseDuration. The Lease
// counts one more transition.
//
// How soon the standby leads is logged, not asserted: the bound,
// takeoverBound, holds only while every attempt ends within
// AttemptTimeout and every wait ends on time, which a loaded machine (a
// busy core, an API server slow to write) does not promise, and each
// attempt that overruns adds another wait and attempt. The bound is
// proved on simulated time by
// TestAStandbyLeadsWithinTheBoundAfterTheLeaderGoesSilent. The check
// here is one-sided: a slow machine only makes the standby later.
func TestAStandbyLeadsOnceAKilledLeadersLeaseExpires(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	events := make(chan event, 64)
	var procs []*candidateProcess
	for range 3 {
		procs = append(procs, startCandidate(t, cp, ns+"/killed", events))
	}
	ids := map[string]bool{}
	for _, p := range procs {
		ids[p.id] = true
	}
	require.Len(t, ids, 3, "default identities are unique, even on one host")

	guard := takeoverBound + time.Minute // a guard against hanging, not a timing
	// sawLeader is the leader each candidate last said it saw, from every
	// event read, so that a standby's "leader" line read while awaiting
	// something else (it may come before the new leader's "leading")
	// still counts.
	sawLeader := map[*candidateProcess]string{}
	await := func(what string, match func(event) bool) event {
		t.Helper()
		timeout := time.After(guard)
		for {
			select {
			case ev := <-events:
				require.NotEqual(t, "error", ev.kind, "candidate %s: %s", ev.from.id, ev.rest)
				if ev.kind == "leader" {
					sawLeader[ev.from] = ev.rest
				}
				if match(ev) {
					return ev
				}
			case <-timeout:
				t.Fatalf("waited %v for %s", guard, what)
			}
		}
	}
	killed := map[*candidateProcess]bool{}
	leaderEv := await("a first leader", func(ev event) bool { return ev.kind == "leading" })
	for kill := 1; kill <= 2; kill++ {
		leader := leaderEv.from
		// Every live standby has seen this leader: the kill happens mid-term.
		seen := map[*candidateProcess]bool{}
		for _, p := range procs {
			if p == leader || killed[p] || sawLeader[p] == leader.id {
				seen[p] = true
			}
		}
		for len(seen) < len(procs) {
			ev := await("standbys to see "+leader.id, func(ev event) bool { return ev.kind == "leader" && ev.rest == leader.id })
			seen[ev.from] = true
		}

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		before := getLease(ctx, t, cp.Config(), ns, "killed") // at or before its last renew
		cancel()
		require.Equal(t, leader.id, *before.Spec.HolderIdentity)
		killedAt := time.Now()
		require.NoError(t, leader.cmd.Process.Kill()) // SIGKILL
		leader.cmd.Wait()
		killed[leader] = true

		leaderEv = await("a standby to lead", func(ev event) bool { return ev.kind == "leading" })
		require.False(t, killed[leaderEv.from])
		startedAt := time.Unix(0, must(strconv.ParseInt(leaderEv.rest, 10, 64)))
		t.Logf("kill %d: takeover %v after SIGKILL, %v after the renew read before it (not before the lease, %v; "+
			"takeoverBound %v = lease %v + 2×%v + 4×%v on an unloaded machine)", kill,
			startedAt.Sub(killedAt).Round(time.Millisecond), startedAt.Sub(before.Spec.RenewTime.Time).Round(time.Millisecond),
			leaseDuration, takeoverBound, leaseDuration, maxAcquireWait, attemptTimeout)
		// The standby first saw the leader's last renew after it was
		// stamped (no earlier than the one read here), and waits out
		// LeaseDuration from then. Both stamps are this host's clock.
		require.True(t, startedAt.After(before.Spec.RenewTime.Add(leaseDuration)),
			"a standby led at %v, before the Lease renewed at %v could expire", startedAt, before.Spec.RenewTime)

		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		lease := getLease(ctx, t, cp.Config(), ns, "killed")
		cancel()
		require.Equal(t, leaderEv.from.id, *lease.Spec.HolderIdentity)
		require.EqualValues(t, kill, *lease.Spec.LeaseTransitions)
	}
}
