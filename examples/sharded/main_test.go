package main

import (
	"bytes"
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

// The full-size run (30,000 objects, 100 updates/s, 200 ms reconciles)
// does not fit `make test` on 2 shared cores; this is the same program and
// the same checks at a tenth of the objects and a fifth of the updates.
// run returns an error if any check fails: exactly one live owner per
// object after each handover, the kill's takeover within its bound, the
// blackholed replica stopped by its renew deadline, no overlapping
// reconciles of one object, and each cache within 0.8/N to 1.2/N.
func TestEveryHandoverKeepsOneOwnerPerObjectAndNoOverlappingReconciles(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	var out bytes.Buffer
	start := time.Now()
	err := run(t.Context(), []string{"--kubeconfig", cp.KubeconfigPath(), "--namespace", ns,
		"--objects=3000", "--update-rate=20", "--reconcile=200ms", "--workers=50"}, &out)
	t.Logf("in %v:\n%s", time.Since(start).Round(time.Second), out.String())
	require.NoError(t, err)
	for _, line := range []string{
		`(?m)^assigned: all 3000 objects to 3 members`,
		`(?m)^kill: \d+ objects of r\d reconciled by others within`,
		`(?m)^join: r\d's sharder resumed`,
		`(?m)^blackhole: r\d stopped every reconcile`,
		`(?m)^blackhole: healed`,
		`(?m)^no two members' reconciles of one object overlapped`,
	} {
		require.Regexp(t, regexp.MustCompile(line), out.String())
	}
}
