package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
)

// etcd is the control plane's storage: one etcd member listening on
// loopback, with its data in the control plane's directory.
type etcd struct {
	bin        string
	dir        string // data and log live here
	clientPort int
	peerPort   int // its own peer port, so two control planes never collide
	proc       *process
}

// clientURL is where kube-apiserver and the JSON gateway reach etcd.
func (e *etcd) clientURL() string { return fmt.Sprintf("http://127.0.0.1:%d", e.clientPort) }

// dataDir is etcd's data directory.
func (e *etcd) dataDir() string { return filepath.Join(e.dir, "etcd-data") }

func (e *etcd) start(ctx context.Context) error {
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", e.peerPort)
	args := []string{
		"--name=default",
		"--data-dir=" + e.dataDir(),
		"--listen-client-urls=" + e.clientURL(),
		"--advertise-client-urls=" + e.clientURL(),
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--log-level=warn",
		// A test cluster never survives a power cut; skipping fsync makes
		// every write several times faster.
		"--unsafe-no-fsync",
	}
	proc, err := startProcess("etcd", e.bin, args, filepath.Join(e.dir, "etcd.log"))
	if err != nil {
		return err
	}
	e.proc = proc
	return proc.waitUntil(ctx, "healthy", func() (bool, error) {
		resp, err := http.Get(e.clientURL() + "/health")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var health struct{ Health string }
		if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
			return false, err
		}
		if health.Health != "true" {
			return false, fmt.Errorf("/health says %q", health.Health)
		}
		return true, nil
	})
}

// CompactEtcd compacts the etcd whose client URL is etcdURL to its current
// revision, through etcd's gRPC-JSON gateway, and returns that revision.
// Every Kubernetes resourceVersion is an etcd revision, so afterwards a
// WATCH from an older resourceVersion cannot be served from etcd: an API
// server without a watch cache answers it 410 Gone. ControlPlane.Compact
// does this for a control plane of this package; programs given only an
// etcd URL (such as `make cluster` prints) call it directly.
func CompactEtcd(ctx context.Context, etcdURL string) (int64, error) {
	rev, err := etcdRevision(ctx, etcdURL)
	if err != nil {
		return 0, err
	}
	body := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	return rev, etcdGateway(ctx, etcdURL, "/v3/kv/compaction", body, nil)
}

// etcdRevision returns etcd's current revision: the number the next
// write's resourceVersion will exceed.
func etcdRevision(ctx context.Context, etcdURL string) (int64, error) {
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range over the single key "\x00" returns nothing but the header.
	if err := etcdGateway(ctx, etcdURL, "/v3/kv/range", map[string]any{"key": "AA=="}, &out); err != nil {
		return 0, err
	}
	return strconv.ParseInt(out.Header.Revision, 10, 64)
}

// etcdGateway POSTs a JSON request to etcd's gRPC-JSON gateway, which
// speaks the same API as etcd's gRPC clients without needing one.
func etcdGateway(ctx context.Context, etcdURL, path string, in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, etcdURL+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}
