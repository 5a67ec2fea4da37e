package testenv

import "net"

// freePort asks the kernel for an unused loopback port. The port is free
// when this returns; another process could take it before the control
// plane binds it, which on a test machine is rare enough to accept.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
