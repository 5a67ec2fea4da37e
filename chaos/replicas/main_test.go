package replicas

import (
	"flag"
	"os"
	"testing"

	"github.com/listwatch/informer/testenv"
)

// The flags of the long runs (make chaos-replicas); `make test` runs one
// seed with the defaults.
var (
	seedsFlag    = flag.Int("seeds", 1, "how many seeds to run, from CHAOS_SEED (default 1) upward")
	durationFlag = flag.Duration("duration", 0, "run each schedule at least this long; 0: one fault of each kind (about 45 s of faults and gaps)")
	objectsFlag  = flag.Int("objects", 0, "parents at the start; 0: 60 for the short run, 150 with -duration")
	reportFlag   = flag.String("report", "", "write the table of runs as markdown to this file")
	eventsFlag   = flag.String("events", "", "write every line the replicas printed to seed-<n>.events in this directory")
)

func TestMain(m *testing.M) {
	if encoded := os.Getenv(replicaEnv); encoded != "" {
		os.Exit(replicaMain(encoded)) // this test binary, re-executed as a replica
	}
	os.Exit(testenv.Main(m, testenv.Options{RBAC: true, Users: []string{user}}))
}
