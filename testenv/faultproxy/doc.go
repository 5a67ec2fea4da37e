// Package faultproxy is a TCP proxy for tests that injects the network
// faults an informer must survive: added latency, connections cut in the
// middle of a watch, and connections refused for a while.
//
// It sits between a client and kube-apiserver:
//
//	client (rest.Config.Host = proxy) ──TCP──▶ faultproxy ──TCP──▶ kube-apiserver
//
// It forwards bytes without reading them, so TLS and HTTP/2 pass through
// unchanged and the client still verifies the apiserver's certificate.
//
// Usage, with the local control plane of package testenv:
//
//	p, err := faultproxy.Start(cp.Addr())
//	defer p.Close()
//	cfg := cp.ConfigVia(p.Addr())  // a client whose requests cross the proxy
//	p.SetRTT(100 * time.Millisecond) // every round trip now takes 100ms longer
//	p.CutAll()                       // every open watch ends now, with a reset
//	p.Refuse(2 * time.Second)        // new connections fail at once for 2s
//	p.Blackhole()                    // a partition: requests hang, nothing fails...
//	p.Heal()                         // ...until now; held bytes are delivered
//
// Counting: Stats reports connections and bytes. It cannot count requests:
// over HTTP/2 one connection carries all of a client's requests. Count
// requests at the server, with testenv's audit log.
//
// Why not toxiproxy: this project's design names Shopify's toxiproxy for
// this job. Its in-process API is shaped for its HTTP control server, and
// counting connections and bytes goes through its Prometheus collectors.
// The four faults needed here (latency, cut, refusal, partition), and the
// counters to see them, fit in three short files a learner can read in one
// sitting, with no dependency.
//
// Concurrency: every method is safe to call from any goroutine. Close
// waits for all of the proxy's goroutines to exit.
package faultproxy
