package replicas

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/listwatch/informer/testenv"
)

// defaultSeed is the seed `make test` runs when CHAOS_SEED is not set.
const defaultSeed = 1

// The replica guarantees of package sharding, checked on a real control
// plane under a seeded schedule of faults (see doc.go for what each
// check means): (a) no two members of a ring reconcile one object at
// once, except where one was paused, whose late writes the
// resourceVersion guard refuses; (b) after the faults, every object is
// owned by one live member within a bound derived from the Lease
// timing; (c) no object is lost or created twice.
func TestReplicaGuaranteesHoldUnderASeededScheduleOfFaults(t *testing.T) {
	cp := testenv.Shared(t)
	first := uint64(defaultSeed)
	if env := os.Getenv("CHAOS_SEED"); env != "" {
		seed, err := strconv.ParseUint(env, 10, 64)
		must(t, err)
		first = seed
	}
	s := settings{
		timing: timing{Lease: 4 * time.Second, Renew: 3 * time.Second, Retry: 500 * time.Millisecond,
			Work: 300 * time.Millisecond, QPS: 200},
		objects: 60, updateRate: 8, churnEvery: 2 * time.Second, duration: *durationFlag,
	}
	if s.duration > 0 {
		s.objects = 150
	}
	if *objectsFlag > 0 {
		s.objects = *objectsFlag
	}
	var results []result
	for i := range *seedsFlag {
		seed := first + uint64(i)
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			res := runSeed(t, cp, seed, s)
			results = append(results, res)
			t.Logf("\n%s", res.table())
			for _, f := range res.failures {
				t.Error(f)
			}
		})
	}
	table := summary(results)
	t.Logf("\n%s", table)
	if *reportFlag != "" {
		must(t, os.MkdirAll(filepath.Dir(*reportFlag), 0o755))
		must(t, os.WriteFile(*reportFlag, []byte(table), 0o644))
		t.Logf("wrote %s", *reportFlag)
	}
}
