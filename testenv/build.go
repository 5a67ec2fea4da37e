package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// BuildCommand is the command that builds the control plane's binaries,
// from any module that requires this one (in this repository, `make
// tools` runs it). Without a version it builds the pins of the version
// your go.mod requires, which is the version whose Start looks for them.
const BuildCommand = "go run github.com/listwatch/informer/cmd/controlplane build"

// Binary is one control-plane binary, built or found in the cache.
type Binary struct {
	Name    string // "etcd" or "kube-apiserver"
	Version string // the pinned release, such as v1.37.2
	Path    string // in the tools cache (see ToolsCacheEnv)
}

// Build builds every control-plane binary that the cache lacks and
// returns them all, in start order. Progress goes to log. A binary
// already cached is not built again, so Build is cheap to call twice.
//
// Each binary is built by the `go` command on PATH in a small module of
// its own under the cache (its pinned go.mod and go.sum, see pins/), with
// CGO off and GOWORK off, to a temporary name that is renamed when done: an
// interrupted build never leaves a half-written binary to be found. The
// first build downloads about 1 GB of modules and takes about 7 minutes on
// a quiet 2-core machine (up to 30 on a busy one), most of it
// kube-apiserver.
func Build(ctx context.Context, log io.Writer) ([]Binary, error) {
	var built []Binary
	for _, t := range tools {
		path, err := t.build(ctx, log)
		if err != nil {
			return nil, err
		}
		built = append(built, Binary{Name: t.name, Version: t.version(), Path: path})
	}
	return built, nil
}

func (t tool) build(ctx context.Context, log io.Writer) (string, error) {
	out, err := t.cachedPath()
	if err != nil {
		return "", err
	}
	if isExecutable(out) {
		return out, nil
	}
	src := filepath.Join(filepath.Dir(out), "src", t.name+"-"+t.key())
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), t.goMod(), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.sum"), t.goSum(), 0o644); err != nil {
		return "", err
	}

	fmt.Fprintf(log, "building %s %s into %s ...\n", t.name, t.version(), out)
	start := time.Now()
	tmp := out + ".tmp." + strconv.Itoa(os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath",
		"-ldflags", "-s -w "+t.ldflags(t.version()), "-o", tmp, t.pkg)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("building %s %s in %s: %w", t.name, t.version(), src, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "built %s in %v\n", t.name, time.Since(start).Round(time.Second))
	return out, nil
}

// isExecutable reports whether path (after symlinks) is an executable file.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
