package kubeconfig

import (
	"errors"
	"flag"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Flags are kubectl's connection flags. The zero value loads the current
// context of $KUBECONFIG or ~/.kube/config, or the in-cluster config.
type Flags struct {
	// Path is --kubeconfig: one kubeconfig file. Empty means $KUBECONFIG,
	// then ~/.kube/config, then in-cluster.
	Path string
	// Context is --context: the kubeconfig context to use. Empty means the
	// kubeconfig's current-context.
	Context string
}

// Register adds --kubeconfig and --context to fs, bound to f.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Path, "kubeconfig", f.Path,
		"path to a kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster, as kubectl)")
	fs.StringVar(&f.Context, "context", f.Context, "kubeconfig context to use (default: its current-context)")
}

// ErrNoConfig is Load's error (wrapped when a file was named) when no
// rule found a cluster: test for it with errors.Is.
var ErrNoConfig = errors.New("no kubeconfig found: pass --kubeconfig, set $KUBECONFIG, " +
	"create a cluster with `kind create cluster`, or start the local control plane " +
	"(go run github.com/listwatch/informer/cmd/controlplane run) and use the kubeconfig it writes")

// Load returns the client configuration that the loading rules find. A
// missing file named by --kubeconfig, an unknown --context or a malformed
// file is an error naming it; finding nothing at all is ErrNoConfig, and
// a named file that holds no cluster is ErrNoConfig wrapped with its name.
func (f Flags) Load() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // $KUBECONFIG, then ~/.kube/config
	rules.ExplicitPath = f.Path
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	switch {
	case err == nil:
		return cfg, nil
	case clientcmd.IsEmptyConfig(err) && f.Context == "" && f.Path != "":
		return nil, fmt.Errorf("the kubeconfig %s names no cluster: %w", f.Path, ErrNoConfig)
	case clientcmd.IsEmptyConfig(err) && f.Context == "":
		return nil, ErrNoConfig
	default:
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
}
