package metrics_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Prometheus adapter is a module of its own, so the library's module
// requires no Prometheus package, directly or indirectly: its go.mod,
// which lists every module that a package of the library or its tests
// imports (module graph pruning, Go 1.17 and later), names none.
func TestTheLibrarysModuleDoesNotRequireThePrometheusClient(t *testing.T) {
	adapter, err := os.ReadFile("prometheus/go.mod")
	require.NoError(t, err)
	assert.Contains(t, string(adapter), "module github.com/listwatch/informer/metrics/prometheus\n", "the adapter is a module of its own")

	library, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	require.Contains(t, string(library), "module github.com/listwatch/informer\n")
	for i, line := range strings.Split(string(library), "\n") {
		for _, field := range strings.Fields(line) {
			assert.False(t, strings.HasPrefix(field, "github.com/prometheus/"), "go.mod:%d requires %s", i+1, field)
		}
	}
}
