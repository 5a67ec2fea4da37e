package faultproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/informer/testenv/faultproxy"
)

// echoServer accepts connections and writes back every line it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				io.Copy(conn, conn)
			}()
		}
	}()
	return l.Addr().String()
}

// startProxy starts a proxy to upstream and closes it at cleanup.
func startProxy(t *testing.T, upstream string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(upstream)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// pingAll sends n lines over conn, one at a time, and returns each
// round trip, shortest first.
func pingAll(t *testing.T, conn net.Conn, n int) []time.Duration {
	t.Helper()
	r := bufio.NewReader(conn)
	var rtts []time.Duration
	for range n {
		start := time.Now()
		_, err := conn.Write([]byte("ping\n"))
		require.NoError(t, err)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ping\n", line)
		rtts = append(rtts, time.Since(start))
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	return rtts
}

func TestProxyForwardsBothWaysAndCountsConnectionsAndBytes(t *testing.T) {
	p := startProxy(t, echoServer(t))
	conn, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer conn.Close()

	pingAll(t, conn, 3) // 3 × "ping\n" each way
	s := p.Stats()
	assert.EqualValues(t, 1, s.Accepted)
	assert.Equal(t, 1, s.Open)
	// A byte is counted once its Write to the other side has returned,
	// which may be just after the client already read the echo.
	assert.Eventually(t, func() bool {
		s := p.Stats()
		return s.BytesToUpstream == 15 && s.BytesFromUpstream == 15
	}, time.Minute, time.Millisecond, "15 bytes each way: %+v", p.Stats()) // a guard, not a timing

	conn.Close()
	assert.Eventually(t, func() bool { return p.Stats().Open == 0 }, time.Minute, 10*time.Millisecond, // a guard, not a timing
		"a connection the client closed is forgotten")
}

// The bounds are one-sided so that a loaded machine cannot fail it: a
// round trip through the proxy can be slow for many reasons, but it can
// never beat the RTT the proxy adds (each direction's delay is counted
// from when the proxy read the bytes, after the client sent them). The
// RTT is large so that an unslowed echo taking as long would mean a
// machine too stalled to run any test, not an unlucky one.
func TestSetRTTAddsLatencyToEveryRoundTrip(t *testing.T) {
	const rtt = 300 * time.Millisecond
	p := startProxy(t, echoServer(t))
	conn, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer conn.Close()

	p.SetRTT(rtt)
	slowed := pingAll(t, conn, 3)
	p.SetRTT(0)
	restored := pingAll(t, conn, 3)

	t.Logf("round trips: %v with %v RTT, %v after removing it", slowed, rtt, restored)
	assert.GreaterOrEqual(t, slowed[0], rtt, "no round trip beats the added RTT")
	assert.Less(t, restored[0], rtt, "SetRTT(0) removes the latency from the next round trips")
}

func TestCutAllResetsOpenConnectionsButAcceptsNewOnes(t *testing.T) {
	p := startProxy(t, echoServer(t))
	conn, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer conn.Close()
	pingAll(t, conn, 1)

	assert.Equal(t, 1, p.CutAll())
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	require.Error(t, err)
	assert.False(t, errors.Is(err, syscall.ETIMEDOUT), "the cut must end the connection, not leave it hanging: %v", err)
	assert.EqualValues(t, 1, p.Stats().Cut)

	again, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "the listener stays open after a cut")
	defer again.Close()
	pingAll(t, again, 1)
}

// No step waits for a time a loaded machine could overrun: the refusal
// checked first lasts an hour, and its end is then brought near by
// refusing again, which sets the end to d from now. "At once" is the
// kernel's answer: ECONNREFUSED is the reset a SYN to a closed port gets,
// and a dial that hung would end in a timeout error instead.
func TestRefuseFailsNewConnectionsAtOnceThenReopensTheSamePort(t *testing.T) {
	p := startProxy(t, echoServer(t))
	p.Refuse(time.Hour)
	assert.True(t, p.Stats().Refusing)

	_, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "a refused connection fails at once, not by timing out")
	var netErr net.Error
	assert.False(t, errors.As(err, &netErr) && netErr.Timeout(), "the dial was refused, not timed out: %v", err)

	p.Refuse(10 * time.Millisecond)      // the refusal now ends 10ms from now, not in an hour
	guard := time.Now().Add(time.Minute) // a guard against hanging, not a timing
	for {
		c, err := net.Dial("tcp", p.Addr())
		if err == nil {
			c.Close()
			break
		}
		require.True(t, time.Now().Before(guard), "the proxy never listened again on the same address: %v", err)
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, p.Stats().Refusing)
}

// readTimesOut reports whether a read on conn gets nothing within d.
func readTimesOut(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	defer conn.SetReadDeadline(time.Time{})
	_, err := conn.Read(make([]byte, 1))
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

func TestBlackholeHoldsEveryByteUntilHealThenDeliversThem(t *testing.T) {
	p := startProxy(t, echoServer(t))
	open, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer open.Close()
	pingAll(t, open, 1)

	p.Blackhole()
	assert.True(t, p.Stats().Blackholed)
	_, err = open.Write([]byte("ping\n"))
	require.NoError(t, err)
	opened, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "a blackholed proxy still accepts: the client cannot tell")
	defer opened.Close()
	_, err = opened.Write([]byte("ping\n"))
	require.NoError(t, err)
	assert.True(t, readTimesOut(open, 200*time.Millisecond), "an open connection hears nothing during a blackhole")
	assert.True(t, readTimesOut(opened, 200*time.Millisecond), "a new connection hears nothing during a blackhole")

	p.Heal()
	assert.False(t, p.Stats().Blackholed)
	for _, conn := range []net.Conn{open, opened} {
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "ping\n", line, "what was sent during the blackhole arrives after Heal")
	}
}

func TestCloseEndsConnectionsAndLeavesNoGoroutines(t *testing.T) {
	upstream := echoServer(t) // the test's own goroutine, started before the check
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := faultproxy.Start(upstream)
	require.NoError(t, err)
	p.SetRTT(10 * time.Millisecond)
	conn, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer conn.Close()
	pingAll(t, conn, 1)
	p.Blackhole()
	_, err = conn.Write([]byte("held\n")) // a writer now waits for Heal
	require.NoError(t, err)
	waiting, err := net.Dial("tcp", p.Addr()) // and so does a new connection
	require.NoError(t, err)
	defer waiting.Close()
	p.Refuse(time.Hour)

	require.NoError(t, p.Close())
	require.Error(t, p.Close(), "closing twice is reported")
	_, err = conn.Read(make([]byte, 1))
	assert.Error(t, err)
}
