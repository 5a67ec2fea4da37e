package consumer_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modulePaths lists the module paths in the build list of the module in
// dir (`go list -m all`, GOWORK=off), without the main module itself.
func modulePaths(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{if not .Main}}{{.Path}}{{end}}", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	require.NoError(t, err, "go list -m all in %s", dir)
	return strings.Fields(string(out))
}

// TestUsingTheLibraryAddsAtMostRapidToAClientGoModuleGraph is the cost of
// `go get github.com/listwatch/informer` for a controller: the modules this
// consumer has that a plain client-go consumer (bench/footprint/baseline)
// has not. Only
// the library itself and pgregory.net/rapid (which its tests use) may be
// among them: examples, benchmarks and their charting and browser
// libraries live in nested modules that no consumer sees.
func TestUsingTheLibraryAddsAtMostRapidToAClientGoModuleGraph(t *testing.T) {
	ours := modulePaths(t, ".")
	base := modulePaths(t, "../bench/footprint/baseline")
	var extra []string
	for _, m := range ours {
		if !slices.Contains(base, m) && m != "github.com/listwatch/informer" {
			extra = append(extra, m)
		}
	}
	t.Logf("modules: %d with the library, %d for plain client-go; beyond client-go's: %v", len(ours), len(base), extra)
	assert.Subset(t, []string{"pgregory.net/rapid"}, extra)
	assert.Contains(t, ours, "github.com/listwatch/informer")
}
