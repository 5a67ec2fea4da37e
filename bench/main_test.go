// Package bench runs the same workloads through this module and through
// client-go v0.37.2's tools/cache and util/workqueue, side by side, so that
// `make bench` can report ours/client-go ratios (see docs/13-benchmarks.md).
//
// Every benchmark names its implementation in its last path element
// (impl=ours, impl=clientgo, and impl=chan or impl=baseline for a floor),
// which is what benchstat's `-col /impl` compares.
//
// Sizes are small by default; BENCH_FULL=1 adds the large ones.
package bench

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"k8s.io/client-go/features"

	"github.com/listwatch/informer/testenv"
)

// clientGoGates pins every client-go feature gate that changes the code
// paths measured here, so a new client-go default cannot change the
// comparison silently. They are the v0.37.2 defaults: InOrderInformers is
// locked on (client-go's informers always use the in-order RealFIFO), and
// WatchListClient makes its informers stream the initial list unless the
// ListerWatcher opts out (workload 10 measures both).
var clientGoGates = map[string]string{
	"AtomicFIFO":                   "true",
	"InOrderInformers":             "true",
	"InOrderInformersBatchProcess": "true",
	"UnlockWhileProcessingFIFO":    "true",
	"WatchListClient":              "true",
	"InformerResourceVersion":      "true",
	"ClientsAllowCBOR":             "false",
	"ClientsPreferCBOR":            "false",
}

func TestMain(m *testing.M) {
	for name, value := range clientGoGates {
		// The Makefile may already have set them; an explicit value wins.
		if _, ok := os.LookupEnv("KUBE_FEATURE_" + name); !ok {
			os.Setenv("KUBE_FEATURE_"+name, value)
		}
	}
	names := make([]string, 0, len(clientGoGates))
	for name := range clientGoGates {
		names = append(names, name)
	}
	sort.Strings(names)
	// Configuration lines in benchmark output format ("key: value"), which
	// benchstat and cmd/benchdoc read back.
	for _, name := range names {
		fmt.Printf("clientgo-gate-%s: %t\n", name, features.FeatureGates().Enabled(features.Feature(name)))
	}
	fmt.Printf("bench-full: %t\n", full())
	// The control plane keeps an audit log: TestADeletedCRDStopsTheInformerWhereClientGoKeepsListing
	// counts each library's requests in it, by user agent.
	// The user controller is an ordinary user, as a controller's service
	// account is: API Priority and Fairness puts its requests in a
	// priority level of its own, where the admin's are exempt
	// (BenchmarkClientLimit).
	os.Exit(testenv.Main(m, testenv.Options{Audit: true, Users: []string{"controller"}}))
}

// TestClientGoGatesArePinned proves the pins took effect.
func TestClientGoGatesArePinned(t *testing.T) {
	for name, want := range clientGoGates {
		if got := features.FeatureGates().Enabled(features.Feature(name)); fmt.Sprint(got) != want {
			t.Errorf("client-go feature %s = %t, want %s", name, got, want)
		}
	}
}
