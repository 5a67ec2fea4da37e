package testenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Options configure a control plane. The zero value is a control plane
// like a real cluster's: watch cache on, no audit log, AlwaysAllow.
type Options struct {
	// DisableWatchCache runs kube-apiserver with --watch-cache=false, so
	// every LIST and WATCH is served by etcd itself. Only then does a WATCH
	// from a compacted resourceVersion answer 410 Gone, and only then does
	// a LIST at resourceVersion "0" honour limit. Default: cache on.
	DisableWatchCache bool
	// Audit writes an audit log of every request (Metadata level) that
	// CountRequests reads. Default: off.
	Audit bool
	// RBAC authorizes with RBAC instead of AlwaysAllow. The admin token is
	// in system:masters, so it passes either way. Default: AlwaysAllow.
	RBAC bool
	// Users are ordinary users, each given a static token of its own and
	// no group but system:authenticated; ConfigAs returns a client
	// configuration for one. Under RBAC such a user may do nothing but
	// discovery until a test binds it a role. Default: none.
	Users []string
	// StartTimeout bounds the start (and each restart) of each process.
	// Default: 60s.
	StartTimeout time.Duration
	// FeatureGates turns kube-apiserver's feature gates on (true) or off
	// (false), as --feature-gates=Name=true,...: {"CBORServingAndStorage":
	// true} serves CBOR (KEP-4222), alpha and off by default in 1.37.
	// An alpha gate needs no other flag
	// (TestCBORServingAndStorageGateMakesTheServerAnswerCBOR). Default:
	// none, every gate at its default.
	FeatureGates map[string]bool
	// ExtraAPIServerFlags are appended to kube-apiserver's flags; a later
	// flag overrides an earlier one. Default: none.
	ExtraAPIServerFlags []string
	// EtcdDataFrom starts etcd on a copy of this etcd data directory, as
	// SaveEtcdData wrote it, so a large population (100k objects) is made
	// once and reused: the copy is the control plane's own, and the
	// directory is never changed. Default: "", an empty etcd.
	EtcdDataFrom string
}

func (o Options) authorizationMode() string {
	if o.RBAC {
		return "RBAC"
	}
	return "AlwaysAllow"
}

// featureGatesFlag is --feature-gates for FeatureGates, the gates in
// name order; "" if there are none.
func (o Options) featureGatesFlag() string {
	if len(o.FeatureGates) == 0 {
		return ""
	}
	terms := make([]string, 0, len(o.FeatureGates))
	for _, name := range slices.Sorted(maps.Keys(o.FeatureGates)) {
		terms = append(terms, name+"="+strconv.FormatBool(o.FeatureGates[name]))
	}
	return "--feature-gates=" + strings.Join(terms, ",")
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return 60 * time.Second
}

// apiserverGrace is how long kube-apiserver may take to stop after SIGTERM
// before it is killed. Given SIGTERM while a watch is open, it waits for
// that watch (seen here: not done after 10 s). Killing it loses nothing,
// since all of its state is in etcd, and keeps a restart at about 4 s.
const apiserverGrace = 3 * time.Second

// ControlPlane is a running etcd and kube-apiserver on loopback ports, with
// their data, certificates and logs in one temporary directory. Create one
// with Start and always Stop it; the processes also die with the process
// that started them.
type ControlPlane struct {
	opts Options
	dir  string // removed by Stop
	etcd *etcd
	api  *apiserver
	ca   []byte // the apiserver's serving certificate bundle, fixed at first start

	mu      sync.Mutex // serializes Restart and Stop
	stopped bool       // guarded by mu
}

// Start starts etcd, then kube-apiserver, and returns once /readyz answers
// ok. It fails with an error naming a missing binary and the command that
// builds it. ctx bounds the whole start.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	etcdBin, err := binary("etcd")
	if err != nil {
		return nil, err
	}
	apiBin, err := binary("kube-apiserver")
	if err != nil {
		return nil, err
	}
	dir, err := newDataDir()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cp = &ControlPlane{
		opts: opts,
		dir:  dir,
		etcd: &etcd{bin: etcdBin, dir: dir, clientPort: ports[0], peerPort: ports[1]},
	}
	cp.api = &apiserver{bin: apiBin, dir: dir, port: ports[2], etcdURL: cp.etcd.clientURL(), opts: opts}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()

	if err := cp.api.prepare(); err != nil {
		return nil, err
	}
	if opts.EtcdDataFrom != "" {
		if err := copyDir(opts.EtcdDataFrom, cp.etcd.dataDir()); err != nil {
			return nil, fmt.Errorf("copying etcd data from %s: %w", opts.EtcdDataFrom, err)
		}
	}
	startCtx, cancel := context.WithTimeout(ctx, opts.startTimeout())
	defer cancel()
	if err := cp.etcd.start(startCtx); err != nil {
		return nil, err
	}
	if err := cp.api.start(startCtx); err != nil {
		return nil, err
	}
	if cp.ca, err = os.ReadFile(cp.api.certFile()); err != nil {
		return nil, fmt.Errorf("reading the apiserver's serving certificate: %w", err)
	}
	if err := cp.WriteKubeconfig(cp.KubeconfigPath()); err != nil {
		return nil, err
	}
	return cp, nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var ports []int
	for len(ports) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// Config returns a new client configuration for the apiserver, as the
// cluster admin, with client-go's default QPS and Burst (5 and 10).
// Callers may change the copy freely.
func (cp *ControlPlane) Config() *rest.Config {
	return cp.ConfigVia(cp.api.addr())
}

// ConfigVia is Config with requests sent to addr (host:port on loopback),
// such as a fault proxy in front of the apiserver. TLS passes through the
// proxy unchanged: the certificate names 127.0.0.1, whatever the port.
func (cp *ControlPlane) ConfigVia(addr string) *rest.Config {
	return &rest.Config{
		Host:            "https://" + addr,
		BearerToken:     adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), cp.ca...)},
	}
}

// ConfigAs is Config for one of Options.Users instead of the admin: the
// same apiserver, that user's static token. It fails for a name that is
// not in Options.Users.
func (cp *ControlPlane) ConfigAs(user string) (*rest.Config, error) {
	token, ok := cp.api.userTokens[user]
	if !ok {
		return nil, fmt.Errorf("testenv: no user %q on this control plane (Options.Users is %q)", user, cp.opts.Users)
	}
	cfg := cp.Config()
	cfg.BearerToken = token
	return cfg, nil
}

// Addr is the apiserver's host:port.
func (cp *ControlPlane) Addr() string { return cp.api.addr() }

// Dir holds the control plane's data, certificates and logs
// (etcd.log, kube-apiserver.log, audit.log) until Stop.
func (cp *ControlPlane) Dir() string { return cp.dir }

// Restart stops kube-apiserver and starts it again on the same port with
// the same certificates, keys and etcd, so data is kept and existing
// clients reconnect. Open watches end. For a moment after it returns, a
// watch-cache-backed apiserver may answer "too old resource version" or
// "Too large resource version" while its cache fills.
func (cp *ControlPlane) Restart(ctx context.Context) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return errors.New("restart of a stopped control plane")
	}
	cp.api.proc.stop(apiserverGrace)
	ctx, cancel := context.WithTimeout(ctx, cp.opts.startTimeout())
	defer cancel()
	return cp.api.start(ctx)
}

// Compact compacts etcd to its current revision and returns that revision,
// rev. etcd keeps the events at rev and later and forgets the rest. A
// WATCH from resourceVersion rv asks for the events after rv, so with the
// watch cache disabled it answers 410 Gone (reason Expired) when rv+1 < rev:
// to provoke one, make two writes after the resourceVersion you will watch
// from, then compact.
func (cp *ControlPlane) Compact(ctx context.Context) (int64, error) {
	return CompactEtcd(ctx, cp.etcd.clientURL())
}

// Stop stops kube-apiserver, then etcd (the apiserver first, so it never
// sees its storage vanish), and removes the directory. It is safe to call
// more than once.
func (cp *ControlPlane) Stop() {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return
	}
	cp.stopped = true
	if cp.api.proc != nil {
		cp.api.proc.stop(apiserverGrace)
	}
	if cp.etcd.proc != nil {
		cp.etcd.proc.stop(5 * time.Second)
	}
	os.RemoveAll(cp.dir)
}

// PIDs returns the process IDs of etcd and kube-apiserver, in that order.
func (cp *ControlPlane) PIDs() []int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return []int{cp.etcd.proc.cmd.Process.Pid, cp.api.proc.cmd.Process.Pid}
}

// EtcdURL is etcd's client URL, for tools that talk to etcd directly.
func (cp *ControlPlane) EtcdURL() string { return cp.etcd.clientURL() }
