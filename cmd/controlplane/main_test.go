package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// built compiles this command once for the test and returns its path.
func built(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "controlplane")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func TestHelpPrintsASynopsisAndExitsZero(t *testing.T) {
	bin := built(t)
	for _, args := range [][]string{{"-h"}, {"build", "-h"}, {"run", "-h"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		cancel()
		require.NoError(t, err, "controlplane %v must exit 0; it printed:\n%s", args, out)
		first, _, _ := strings.Cut(string(out), "\n")
		assert.Regexp(t, `^controlplane( build| run)?: [a-z].{20,}$`, first, "controlplane %v", args)
	}
}

func TestAnUnknownCommandIsAUsageError(t *testing.T) {
	out, err := exec.Command(built(t), "start").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), `unknown command "start"`)
}
