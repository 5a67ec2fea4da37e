package sharedinformer_test

import (
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharedinformer"
)

// zooFaults is a fake API server serving octopodes (Octopus, namespaced)
// in zoo/v1, with the discovery faults the mapper's tests switch on and
// off as they go. Every switch starts off.
type zooFaults struct {
	srv *fakeapiserver.Server
	cfg *rest.Config

	zooFails  atomic.Bool // zoo's discovery, in every version, answers 503
	listFails atomic.Bool // the list of groups (/apis) answers 503
	holdCore  atomic.Bool // /api/v1 hangs until release is closed
	hangList  atomic.Bool // /apis hangs until its client gives up
	release   chan struct{}
	coreHeld  chan struct{} // told when /api/v1 hangs (one buffered)
	listHung  chan struct{} // told when /apis hangs (one buffered)

	mu    sync.Mutex
	paths []string // every path asked, in order
}

func newZooFaults(t *testing.T) *zooFaults {
	t.Helper()
	z := &zooFaults{srv: fakeapiserver.New(), release: make(chan struct{}),
		coreHeld: make(chan struct{}, 1), listHung: make(chan struct{}, 1)}
	mem := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(z.srv, z.fault))
	t.Cleanup(mem.Close)
	require.NoError(t, z.srv.InstallCRD(fakeapiserver.CRD{Group: zooGV.Group, Version: zooGV.Version, Kind: "Octopus", Plural: "octopodes"}))
	z.cfg = mem.Config()
	return z
}

func (z *zooFaults) fault(r *http.Request) fakeapiserver.Fault {
	z.mu.Lock()
	z.paths = append(z.paths, r.URL.Path)
	z.mu.Unlock()
	version, inZoo := strings.CutPrefix(r.URL.Path, "/apis/"+zooGV.Group+"/")
	switch {
	case z.zooFails.Load() && inZoo && !strings.Contains(version, "/"):
		return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
	case z.listFails.Load() && r.URL.Path == "/apis":
		return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
	case z.holdCore.Load() && r.URL.Path == "/api/v1":
		tell(z.coreHeld)
		return fakeapiserver.Fault{Hang: true, Until: z.release}
	case z.hangList.Load() && r.URL.Path == "/apis":
		tell(z.listHung)
		return fakeapiserver.Fault{Hang: true}
	}
	return fakeapiserver.Fault{}
}

// asked is every path asked so far.
func (z *zooFaults) asked() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.paths)
}

func tell(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// zooFactory is a factory over cfg that knows scheme, logging nothing.
func zooFactory(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme) *sharedinformer.Factory {
	t.Helper()
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: scheme,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnError: func(error) {}})
	require.NoError(t, err)
	return f
}
