package testenv

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv/faultproxy"
)

// Proxy starts a fault proxy in front of the apiserver for one test and
// returns it with a client configuration whose requests cross it. The proxy
// is closed at the test's cleanup. Other clients of the control plane are
// not affected by its faults.
func (cp *ControlPlane) Proxy(t testing.TB) (*faultproxy.Proxy, *rest.Config) {
	t.Helper()
	p, err := faultproxy.Start(cp.Addr())
	if err != nil {
		t.Fatalf("starting a fault proxy: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, cp.ConfigVia(p.Addr())
}
