package testenv

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// KubeconfigPath is the kubeconfig file Start wrote for this control plane,
// inside Dir. kubectl, client-go's clientcmd and this module's examples
// read it: KUBECONFIG=<path> kubectl get namespaces
func (cp *ControlPlane) KubeconfigPath() string { return filepath.Join(cp.dir, "kubeconfig") }

// WriteKubeconfig writes a kubeconfig for this control plane to path, with
// one cluster, one user (the admin token) and one current context, all
// named "listwatch-local".
func (cp *ControlPlane) WriteKubeconfig(path string) error {
	const name = "listwatch-local"
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: %[1]s
  user:
    token: %[4]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s
current-context: %[1]s
`, name, cp.api.url(), base64.StdEncoding.EncodeToString(cp.ca), adminToken)
	return os.WriteFile(path, []byte(config), 0o600)
}
