package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) {
	if replicaArgs := os.Getenv(replicaEnv); replicaArgs != "" {
		os.Exit(replicaMain(replicaArgs)) // this test binary, re-executed as a replica
	}
	os.Exit(testenv.Main(m, testenv.Options{}))
}

// objects is the test's size: 1,500 ConfigMaps in make test; make
// sharded runs it at 3,000 (-objects=3000), the size docs/16-sharding.md
// quotes.
var objects = flag.Int("objects", 1500, "ConfigMaps the handover test shards")

// The full-size run (30,000 objects, 100 updates/s, 200 ms reconciles)
// does not fit `make test` on 2 shared cores; this is the same program and
// the same checks at a twentieth of the objects and a fifth of the updates.
// run returns an error if any check fails: exactly one live owner per
// object after each handover, the kill's takeover within its bound, the
// blackholed replica stopped by its renew deadline, no overlapping
// reconciles of one object, and each cache within 0.8/N to 1.2/N.
//
// That last check is statistical, so the size must keep it from failing
// by chance. A member's share of the ring (1,000 points per member, ids
// new every run) has variance p(1−p)/(1000N+1) for p = 1/N, and its
// count of K objects adds a binomial p(1−p)/K; relative to the fair
// share that is (N−1)/(1000N+1) + (N−1)/K. At K = 1,500 and N = 3 (the
// checks run at N = 3 and N = 2) one standard deviation is 4.5%, so
// ±20% is 4.5 of them: about 8·10⁻⁶ per member, 2·10⁻⁵ per run (N = 2
// adds 10⁻⁸). At 1,000 objects it would be 3·10⁻⁴ per run, at 3,000 10⁻⁷.
func TestEveryHandoverKeepsOneOwnerPerObjectAndNoOverlappingReconciles(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	var out bytes.Buffer
	start := time.Now()
	err := run(t.Context(), []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns,
		fmt.Sprintf("--objects=%d", *objects), "--update-rate=20", "--reconcile=200ms", "--workers=50"}, &out)
	t.Logf("in %v:\n%s", time.Since(start).Round(time.Second), out.String())
	require.NoError(t, err)
	for _, line := range []string{
		fmt.Sprintf(`(?m)^assigned: all %d objects to 3 members`, *objects),
		`(?m)^kill: \d+ objects of r\d reconciled by others within`,
		`(?m)^join: r\d's sharder resumed`,
		`(?m)^blackhole: r\d stopped every reconcile`,
		`(?m)^blackhole: healed`,
		`(?m)^no two members' reconciles of one object overlapped`,
	} {
		require.Regexp(t, regexp.MustCompile(line), out.String())
	}
}
