package cli

import (
	"fmt"
	"net"
	"net/url"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv/faultproxy"
)

// StartProxy puts a fault proxy in front of cfg's API server and returns it
// with a copy of cfg whose requests cross it. The proxy forwards bytes, so
// TLS passes through: the client still checks the server's certificate,
// under the server's own name (ServerName), whatever the proxy's address.
func StartProxy(cfg *rest.Config) (*faultproxy.Proxy, *rest.Config, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("cannot put a proxy in front of server %q: %v", cfg.Host, err)
	}
	upstream := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		upstream = net.JoinHostPort(u.Hostname(), port)
	}
	p, err := faultproxy.Start(upstream)
	if err != nil {
		return nil, nil, err
	}
	via := rest.CopyConfig(cfg)
	via.Host = u.Scheme + "://" + p.Addr()
	if via.TLSClientConfig.ServerName == "" {
		via.TLSClientConfig.ServerName = u.Hostname()
	}
	return p, via, nil
}
