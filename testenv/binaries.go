package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names an environment variable that overrides where the
// control plane's binaries are looked for (default: bin/ at the root of
// this module's checkout, where hack/build-tools.sh links them).
const BinDirEnv = "LISTWATCH_BIN_DIR"

const modulePath = "github.com/listwatch/informer"

// binary returns the path of the named control-plane binary, or an error
// that names the binary, where it was looked for, and the command that
// builds it.
func binary(name string) (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", fmt.Errorf("locating %s: %w (set %s to the directory that holds it)", name, err, BinDirEnv)
		}
		dir = filepath.Join(root, "bin")
	}
	path := filepath.Join(dir, name)
	info, err := os.Stat(path) // follows the symlink into the build cache
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s not found at %s: build it with `make tools` (runs hack/build-tools.sh; "+
			"about 10 minutes the first time, cached afterwards)", name, path)
	}
	return path, nil
}

// moduleRoot walks up from the working directory to the directory whose
// go.mod declares this module. Tests run in their package's directory and
// programs usually from the checkout's root; both find it.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod for " + modulePath + " above the working directory")
		}
		dir = parent
	}
}
