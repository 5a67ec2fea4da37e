package testenv_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

// A test package whose control plane cannot start fails, with the
// reason, and runs no test: its integration tests are never skipped.
// This test binary is re-run with an empty binary directory; its
// TestMain (testenv.Main) must exit 1 before any test runs.
func TestAPackageWhoseControlPlaneCannotStartFailsAndSkipsNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestConfigMapCanBeCreatedReadListedAndWatched$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), testenv.BinDirEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the package did not fail: %v\n%s", err, out)
	assert.Equal(t, 1, exit.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "testenv: the local control plane did not start")
	assert.Contains(t, string(out), testenv.BinDirEnv, "the reason names the empty directory's variable")
	assert.False(t, strings.Contains(string(out), "=== RUN") || strings.Contains(string(out), "SKIP"), "a test ran or was skipped:\n%s", out)
}
