package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names an environment variable that overrides where the
// control plane's binaries are looked for: a directory holding etcd and
// kube-apiserver, for binaries you built or downloaded yourself. Unset,
// Start uses the ones Build cached (see BuildCommand).
const BinDirEnv = "LISTWATCH_BIN_DIR"

// MissingBinaryError is Start's error when a control-plane binary is not
// where it was looked for.
type MissingBinaryError struct {
	Name    string // "etcd" or "kube-apiserver"
	Version string // the pinned version; empty when BinDirEnv chose the path
	Path    string // where it was looked for
}

// Error says what is missing and, for the cached binaries, how to build it.
func (e *MissingBinaryError) Error() string {
	if e.Version == "" {
		return fmt.Sprintf("%s not found at %s (from $%s)", e.Name, e.Path, BinDirEnv)
	}
	return fmt.Sprintf("%s %s not found at %s: build it with `%s` (in this repository: `make tools`); "+
		"the first build takes about 7 minutes on a quiet 2-core machine (up to 30 on a busy one), later ones find it cached", e.Name, e.Version, e.Path, BuildCommand)
}

// binary returns the path of the named control-plane binary. It does not
// depend on the working directory, so tests in any module find the
// binaries that Build cached.
func binary(name string) (string, error) {
	t, err := toolNamed(name)
	if err != nil {
		return "", err
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		path := filepath.Join(dir, name)
		if !isExecutable(path) {
			return "", &MissingBinaryError{Name: name, Path: path}
		}
		return path, nil
	}
	path, err := t.cachedPath()
	if err != nil {
		return "", err
	}
	if !isExecutable(path) {
		return "", &MissingBinaryError{Name: name, Version: t.version(), Path: path}
	}
	return path, nil
}
