// Package examples_test holds what is true of every program in this
// module: each answers -h with a one-line synopsis and exit status 0.
package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryProgramAnswersHelpWithASynopsisAndExitsZero(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list, err := exec.CommandContext(ctx, "go", "list", "-f", "{{if eq .Name \"main\"}}{{.Dir}}{{end}}", "./...").Output()
	require.NoError(t, err)
	dirs := strings.Fields(string(list))
	require.GreaterOrEqual(t, len(dirs), 7, "the tour, the live view, the lab and the demo")

	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./...")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, name), "-h")
			cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent") // -h must not need a cluster
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s -h must exit 0; it printed:\n%s", name, out)
			first, _, _ := strings.Cut(string(out), "\n")
			assert.Regexp(t, "^"+name+": [a-z].{20,}$", first, "the first line is a synopsis")
		})
	}
}
