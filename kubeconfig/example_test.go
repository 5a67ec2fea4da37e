package kubeconfig_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/listwatch/informer/kubeconfig"
)

// A program registers kubectl's flags and loads whatever they point at.
// Here --kubeconfig names a file with two contexts and --context picks the
// second.
func Example() {
	dir, _ := os.MkdirTemp("", "kubeconfig-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
current-context: kind
clusters:
- {name: kind, cluster: {server: "https://127.0.0.1:6443"}}
- {name: staging, cluster: {server: "https://staging.example.com"}}
users:
- {name: me, user: {token: secret}}
contexts:
- {name: kind, context: {cluster: kind, user: me}}
- {name: staging, context: {cluster: staging, user: me}}
`), 0o600)

	var conn kubeconfig.Flags
	fs := flag.NewFlagSet("my-controller", flag.ExitOnError)
	conn.Register(fs)
	fs.Parse([]string{"--kubeconfig", path, "--context", "staging"})

	cfg, err := conn.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Host)
	// Output: https://staging.example.com
}
