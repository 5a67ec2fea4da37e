package kubeconfig_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/kubeconfig"
)

// writeKubeconfig writes a kubeconfig with one context per server, named
// after its position ("c0", "c1", ...); the first is current.
func writeKubeconfig(t *testing.T, servers ...string) string {
	t.Helper()
	text := "apiVersion: v1\nkind: Config\ncurrent-context: c0\nclusters:\n"
	for i, s := range servers {
		text += fmt.Sprintf("- name: c%d\n  cluster:\n    server: %s\n", i, s)
	}
	text += "users:\n- name: u\n  user:\n    token: t\ncontexts:\n"
	for i := range servers {
		text += fmt.Sprintf("- name: c%d\n  context:\n    cluster: c%d\n    user: u\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// isolate clears $KUBECONFIG and the in-cluster variables, so only the
// file the test names is found.
func isolate(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
}

func TestKubeconfigFlagWinsOverTheEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv("KUBECONFIG", writeKubeconfig(t, "https://from-env:6443"))
	cfg, err := kubeconfig.Flags{Path: writeKubeconfig(t, "https://from-flag:6443")}.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://from-flag:6443", cfg.Host)
}

// loadIn runs Load in a fresh process whose $HOME is home and $KUBECONFIG
// is env, and returns the host it found or its error. A fresh process,
// because client-go reads $HOME once, when it is initialized.
func loadIn(t *testing.T, home, env string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadHelper$")
	cmd.Env = append(os.Environ(), "KUBECONFIG_LOAD_HELPER=1", "HOME="+home, "KUBECONFIG="+env,
		"KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// TestLoadHelper is loadIn's other process: it prints what Load found.
func TestLoadHelper(t *testing.T) {
	if os.Getenv("KUBECONFIG_LOAD_HELPER") != "1" {
		return
	}
	cfg, err := kubeconfig.Flags{}.Load()
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(cfg.Host)
}

// homeWithConfig is a home directory whose ~/.kube/config names server.
func homeWithConfig(t *testing.T, server string) string {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".kube"), 0o755))
	require.NoError(t, os.Rename(writeKubeconfig(t, server), filepath.Join(home, ".kube", "config")))
	return home
}

func TestKubeconfigEnvironmentVariableWinsOverTheHomeFile(t *testing.T) {
	home := homeWithConfig(t, "https://from-home:6443")
	assert.Equal(t, "https://from-env:6443", loadIn(t, home, writeKubeconfig(t, "https://from-env:6443")))
}

func TestKubeconfigHomeFileIsTheDefault(t *testing.T) {
	home := homeWithConfig(t, "https://from-home:6443")
	assert.Equal(t, "https://from-home:6443", loadIn(t, home, ""))
}

func TestFindingNothingSaysWhereItLookedAndWhatToDo(t *testing.T) {
	assert.Contains(t, loadIn(t, t.TempDir(), ""), kubeconfig.ErrNoConfig.Error())
}

func TestContextFlagPicksAnotherContext(t *testing.T) {
	isolate(t)
	path := writeKubeconfig(t, "https://first:6443", "https://second:6443")
	cfg, err := kubeconfig.Flags{Path: path, Context: "c1"}.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://second:6443", cfg.Host)
}

func TestAnUnknownContextIsAnErrorNamingIt(t *testing.T) {
	isolate(t)
	_, err := kubeconfig.Flags{Path: writeKubeconfig(t, "https://first:6443"), Context: "nope"}.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nope"`)
}

func TestAMissingKubeconfigFileIsAnErrorNamingIt(t *testing.T) {
	isolate(t)
	missing := filepath.Join(t.TempDir(), "absent")
	_, err := kubeconfig.Flags{Path: missing}.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)
}

func TestRegisterAddsTheFlagsKubectlHas(t *testing.T) {
	var conn kubeconfig.Flags
	fs := flag.NewFlagSet("program", flag.ContinueOnError)
	conn.Register(fs)
	require.NoError(t, fs.Parse([]string{"--kubeconfig", "/k", "--context", "kind-kind"}))
	assert.Equal(t, kubeconfig.Flags{Path: "/k", Context: "kind-kind"}, conn)
}

// An empty file given by --kubeconfig names no cluster: the error names
// that file, rather than telling the user to pass --kubeconfig, and is
// still ErrNoConfig to errors.Is.
func TestAnEmptyKubeconfigFileIsAnErrorNamingIt(t *testing.T) {
	isolate(t)
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, err := kubeconfig.Flags{Path: empty}.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), empty)
	assert.ErrorIs(t, err, kubeconfig.ErrNoConfig)
}
