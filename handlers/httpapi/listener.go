package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Connections are capped at the listener (issue 11): in total, so that a
// flood of idle connections cannot exhaust the process's file descriptors,
// and per client address (IPv4 address, IPv6 /64), so that one client
// cannot hold all of them. A connection over a cap is answered at once
// with a short HTTP error (503 QWED-SYS-002 over the total, 429
// QWED-AUTH-004 over the address's share) and closed, before any of its
// bytes is read.

// Default connection caps (serve's --max-connections and
// --max-connections-per-address).
const (
	DefaultMaxConnections           = 4096
	DefaultMaxConnectionsPerAddress = 256
	// refuseWriteTimeout bounds the write of the refusal to a connection
	// over a cap.
	refuseWriteTimeout = 100 * time.Millisecond
)

// ConnLimit caps the open connections of a listener. A zero field sets no
// cap.
type ConnLimit struct {
	// Max is the most connections open at once.
	Max int
	// PerAddress is the most connections open at once from one client
	// address.
	PerAddress int
}

// LimitListener returns ln with lim applied to the connections it accepts.
func LimitListener(ln net.Listener, lim ConnLimit) net.Listener {
	return limitWith(ln, lim, false)
}

// limitWith is LimitListener; quiet closes a connection over a cap
// without an answer (a TLS listener's, see ListenForTLS).
func limitWith(ln net.Listener, lim ConnLimit, quiet bool) net.Listener {
	if lim.Max <= 0 && lim.PerAddress <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, lim: lim, addrs: map[netip.Prefix]int{}, quiet: quiet}
}

// Listen listens on the TCP address addr with lim applied.
func Listen(addr string, lim ConnLimit) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return LimitListener(ln, lim), nil
}

type limitListener struct {
	net.Listener
	lim   ConnLimit
	quiet bool // refuse by closing, without an HTTP answer
	mu    sync.Mutex
	open  int
	addrs map[netip.Prefix]int // open connections per client address; no zero counts
}

// Accept returns the next connection within the caps; the connections over
// a cap are refused on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := addrKey(c.RemoteAddr())
		l.mu.Lock()
		switch {
		case l.lim.Max > 0 && l.open >= l.lim.Max:
			l.mu.Unlock()
			l.refuse(c, failure(domain.CodeUnavailable, "too many open connections (%d)", l.lim.Max))
			continue
		case l.lim.PerAddress > 0 && l.addrs[key] >= l.lim.PerAddress:
			l.mu.Unlock()
			e := failure(domain.CodeRateLimited, "too many open connections from your address (%d)", l.lim.PerAddress)
			e.err.Details = map[string]any{"scope": "connections_per_address", "limit": l.lim.PerAddress}
			l.refuse(c, e)
			continue
		}
		l.open++
		l.addrs[key]++
		l.mu.Unlock()
		return &limitConn{Conn: c, release: func() { l.release(key) }}, nil
	}
}

func (l *limitListener) release(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.addrs[key]--; l.addrs[key] <= 0 {
		delete(l.addrs, key)
	}
}

// refuse answers e on c (unless the listener is quiet) and closes c.
func (l *limitListener) refuse(c net.Conn, e *apiError) {
	if l.quiet {
		_ = c.Close()
		return
	}
	refuseConn(c, e)
}

// addrKey is the client address of a connection's remote address.
func addrKey(a net.Addr) netip.Prefix {
	var ip netip.Addr
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ = netip.AddrFromSlice(ta.IP)
	} else if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		ip = ap.Addr()
	}
	return clientPrefix(ip)
}

// clientPrefix is the client address of ip: the IPv4 address, or the /64
// of an IPv6 address (one host usually holds a whole /64).
func clientPrefix(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// refuseConn answers e on c as an HTTP response and closes c.
func refuseConn(c net.Conn, e *apiError) {
	body := e.body()
	msg := "HTTP/1.1 " + strconv.Itoa(e.status) + " " + http.StatusText(e.status) + "\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n"
	if e.status == http.StatusTooManyRequests {
		msg += "Retry-After: 1\r\n"
	}
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = c.Write(append([]byte(msg+"\r\n"), body...))
	_ = c.Close()
}

// limitConn releases its slot once, on its first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
