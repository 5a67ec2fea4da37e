package testenv

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// pins holds, for each binary, the go.mod and go.sum of the small module
// it is built in. They are the one source of its version and of every
// dependency's: the cache key below hashes them, so Build and the lookup
// in Start always agree, from this repository or from any module that
// depends on this one.
//
//go:embed pins/*.go.mod pins/*.go.sum
var pins embed.FS

// ToolsCacheEnv names an environment variable that overrides the directory
// where built binaries are cached (default: the user cache directory's
// listwatch-informer/tools, that is $XDG_CACHE_HOME or ~/.cache).
const ToolsCacheEnv = "LISTWATCH_TOOLS_CACHE"

// tool is one control-plane binary and how to build it.
type tool struct {
	name    string // the binary's name, and its pins' file prefix
	module  string // the module whose version the binary reports
	pkg     string // the main package that is built
	ldflags func(version string) string
}

// tools are the binaries a control plane runs, in start order.
var tools = []tool{
	{name: "etcd", module: "go.etcd.io/etcd/server/v3", pkg: "go.etcd.io/etcd/server/v3",
		ldflags: func(string) string { return "" }},
	{name: "kube-apiserver", module: "k8s.io/kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-apiserver",
		ldflags: kubeVersionFlags},
}

// kubeVersionFlags stamps the release into kube-apiserver. Without them
// /version reports v0.0.0-master, and clients that check the server's
// version (kubectl, discovery) get a misleading answer.
func kubeVersionFlags(version string) string {
	const v = "k8s.io/component-base/version"
	minor, _, _ := strings.Cut(strings.TrimPrefix(version, "v1."), ".")
	return fmt.Sprintf("-X %[1]s.gitVersion=%[2]s -X %[1]s.gitMajor=1 -X %[1]s.gitMinor=%[3]s -X %[1]s.gitTreeState=clean",
		v, version, minor)
}

func toolNamed(name string) (tool, error) {
	for _, t := range tools {
		if t.name == name {
			return t, nil
		}
	}
	return tool{}, fmt.Errorf("testenv: no control-plane binary named %q", name)
}

// goMod and goSum are the tool's pinned module files.
func (t tool) goMod() []byte { return mustPin("pins/" + t.name + ".go.mod") }
func (t tool) goSum() []byte { return mustPin("pins/" + t.name + ".go.sum") }

func mustPin(path string) []byte {
	data, err := pins.ReadFile(path)
	if err != nil {
		panic("testenv: pinned file missing from the build: " + path) // embedded at compile time
	}
	return data
}

// version is the pinned version of the tool's module, read from its go.mod.
func (t tool) version() string {
	for _, line := range strings.Split(string(t.goMod()), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == t.module {
			return fields[1]
		}
	}
	panic("testenv: pins/" + t.name + ".go.mod does not require " + t.module)
}

// key identifies one build of the tool: a hash of its go.mod and go.sum,
// so a change of version or of any dependency builds anew instead of
// reusing a stale binary.
func (t tool) key() string {
	h := sha256.New()
	h.Write(t.goMod())
	h.Write(t.goSum())
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// cachedPath is where Build puts the tool and where Start looks for it:
// <cache>/<name>-<version>-<key>.
func (t tool) cachedPath() (string, error) {
	dir, err := toolsCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, t.name+"-"+t.version()+"-"+t.key()), nil
}

// toolsCacheDir is $LISTWATCH_TOOLS_CACHE, or listwatch-informer/tools in
// the user cache directory.
func toolsCacheDir() (string, error) {
	if dir := os.Getenv(ToolsCacheEnv); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the control plane's binaries (set %s): %w", ToolsCacheEnv, err)
	}
	return filepath.Join(base, "listwatch-informer", "tools"), nil
}
