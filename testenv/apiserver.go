package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The static token every client of the local control plane presents. Its
// user is in system:masters, so it may do anything even under RBAC.
const (
	adminToken = "listwatch-admin-token"
	adminUser  = "listwatch-admin"
)

// apiserver is one kube-apiserver process. Its certificate directory, port
// and service-account keys stay the same across restarts, so clients (and
// kubeconfig files) made before a restart keep working after it.
type apiserver struct {
	bin     string
	dir     string
	port    int
	etcdURL string
	opts    Options
	proc    *process
	// userTokens maps each of Options.Users to its static token, written
	// once by prepare.
	userTokens map[string]string
}

func (a *apiserver) url() string  { return fmt.Sprintf("https://127.0.0.1:%d", a.port) }
func (a *apiserver) addr() string { return fmt.Sprintf("127.0.0.1:%d", a.port) }

// certFile is the serving certificate kube-apiserver generates in its cert
// dir on first start: a leaf for 127.0.0.1 and localhost followed by the
// self-signed CA that issued it, so clients can use it as their CA bundle.
func (a *apiserver) certFile() string { return filepath.Join(a.dir, "certs", "apiserver.crt") }

// prepare writes the files kube-apiserver reads at start: the static token
// file, the service-account signing key pair and, if asked for, the audit
// policy. It runs once per control plane, never on restart.
func (a *apiserver) prepare() error {
	if err := os.MkdirAll(filepath.Join(a.dir, "certs"), 0o700); err != nil {
		return err
	}
	tokens, err := a.tokenFile()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(a.dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	if err := writeServiceAccountKeys(a.dir); err != nil {
		return err
	}
	if a.opts.Audit {
		return os.WriteFile(filepath.Join(a.dir, "audit-policy.yaml"), []byte(auditPolicy), 0o600)
	}
	return nil
}

// tokenFile is the --token-auth-file content: one line per user, the
// admin in system:masters and each of Options.Users in no group, each
// with a token of its own.
func (a *apiserver) tokenFile() (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s,%s,\"system:masters\"\n", adminToken, adminUser, adminUser)
	a.userTokens = map[string]string{}
	for _, user := range a.opts.Users {
		if user == "" || user == adminUser || strings.ContainsAny(user, ",\"\n") {
			return "", fmt.Errorf("testenv: Options.Users: %q is not a usable user name", user)
		}
		if _, dup := a.userTokens[user]; dup {
			return "", fmt.Errorf("testenv: Options.Users: %q is listed twice", user)
		}
		token := "listwatch-user-token-" + strconv.Itoa(len(a.userTokens))
		a.userTokens[user] = token
		fmt.Fprintf(&b, "%s,%s,%s\n", token, user, user)
	}
	return b.String(), nil
}

// args are kube-apiserver's flags. Each one not at its default is here for
// a reason this control plane has (there is no controller-manager, no
// node, no cloud), and says so.
func (a *apiserver) args() []string {
	args := []string{
		"--etcd-servers=" + a.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(a.port),
		"--cert-dir=" + filepath.Join(a.dir, "certs"),
		"--token-auth-file=" + filepath.Join(a.dir, "tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(a.dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(a.dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No controller keeps the "kubernetes" Service's endpoints; without
		// this the apiserver would try to, against an address nobody serves.
		"--endpoint-reconciler-type=none",
		// The ServiceAccount admission plugin rejects Pods until a token
		// controller (part of the absent controller-manager) has created the
		// namespace's default ServiceAccount.
		"--disable-admission-plugins=ServiceAccount",
		"--authorization-mode=" + a.opts.authorizationMode(),
		"--watch-cache=" + strconv.FormatBool(!a.opts.DisableWatchCache),
		"--profiling=false",
	}
	if a.opts.Audit {
		args = append(args,
			"--audit-policy-file="+filepath.Join(a.dir, "audit-policy.yaml"),
			"--audit-log-path="+a.auditLogPath(),
			"--audit-log-format=json",
			// blocking: an event is written before the request is served, so
			// a count taken after a response already includes that request.
			"--audit-log-mode=blocking",
		)
	}
	if gates := a.opts.featureGatesFlag(); gates != "" {
		args = append(args, gates)
	}
	return append(args, a.opts.ExtraAPIServerFlags...)
}

func (a *apiserver) auditLogPath() string { return filepath.Join(a.dir, "audit.log") }

// start runs kube-apiserver and waits until /readyz answers ok.
func (a *apiserver) start(ctx context.Context) error {
	proc, err := startProcess("kube-apiserver", a.bin, a.args(), filepath.Join(a.dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	a.proc = proc
	// Readiness is probed before we trust the certificate (it may not be
	// written yet), so this one client skips verification. It only ever
	// talks to the loopback port we chose.
	probe := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer probe.CloseIdleConnections()
	return proc.waitUntil(ctx, "ready", func() (bool, error) {
		req, _ := http.NewRequest(http.MethodGet, a.url()+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := probe.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("/readyz: %s", resp.Status)
		}
		return true, nil
	})
}

// writeServiceAccountKeys writes the key pair kube-apiserver signs and
// verifies service-account tokens with. ECDSA P-256 is used because it is
// generated in microseconds, where RSA 2048 can take a second.
func writeServiceAccountKeys(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}
