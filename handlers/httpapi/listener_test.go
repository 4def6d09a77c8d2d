package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// connFrom opens a TCP connection from the loopback address ip to addr and
// checks it is served: one request, one 200, the connection kept alive.
func connFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	c := dialFrom(t, ip, addr)
	if status, _ := roundTrip(t, c); status != http.StatusOK {
		t.Fatalf("connection from %s: status %d, want 200", ip, status)
	}
	return c
}

func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dialing from %s: %v", ip, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip sends a GET on c and reads the answer's status and body.
func roundTrip(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n"); err != nil {
		return 0, err.Error()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Issue 11 item 15, over real sockets: past the per-address cap the next
// connection from that address is answered 429 QWED-AUTH-004 and closed,
// while another address is served; past the total cap a connection is
// answered 503 QWED-SYS-002; a closed connection frees its slot.
func TestIssue11_ConnectionCaps(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", ConnLimit{Max: 4, PerAddress: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	a1 := connFrom(t, "127.0.0.2", addr)
	connFrom(t, "127.0.0.2", addr)
	over := dialFrom(t, "127.0.0.2", addr)
	status, body := roundTrip(t, over)
	if status != http.StatusTooManyRequests || !strings.Contains(body, `"QWED-AUTH-004"`) || !strings.Contains(body, "connections_per_address") {
		t.Fatalf("third connection from one address: %d %s, want 429 QWED-AUTH-004", status, body)
	}
	if n, err := over.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the refused connection stays open (%d more bytes)", n)
	}
	connFrom(t, "127.0.0.3", addr)
	connFrom(t, "127.0.0.3", addr)
	status, body = roundTrip(t, dialFrom(t, "127.0.0.4", addr))
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"QWED-SYS-002"`) {
		t.Fatalf("a connection over the total: %d %s, want 503 QWED-SYS-002", status, body)
	}
	// Closing a connection frees its slot once the server has seen it go.
	_ = a1.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := dialFrom(t, "127.0.0.2", addr)
		status, body := roundTrip(t, c)
		if status == http.StatusOK {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the closed connection's slot was never freed: %d %s", status, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
