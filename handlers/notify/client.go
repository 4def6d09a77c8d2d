package notify

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/agentgate/agentgate/handlers/adapter"
)

// NewClient returns the runner's HTTP client: no proxy from the
// environment (the address check would see the proxy's), no redirects
// followed (a 3xx answer is the attempt's status), keep-alive connections,
// and a dialer that checks every address it dials against the business
// calls' network policy (adapter.NetworkPolicy, on the address actually
// dialled, after DNS resolution, so a rebinding name gains nothing):
// unspecified, link-local (cloud metadata), multicast and broadcast
// addresses are always refused; loopback and private ones too unless
// allowPrivate.
func NewClient(allowPrivate bool) *http.Client {
	policy := adapter.NetworkPolicy{DenyPrivate: !allowPrivate}
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dialling %q: not an IP address and port", address)
			}
			return policy.Allowed(ap.Addr())
		}}
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  DefaultTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
