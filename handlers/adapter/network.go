package adapter

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// NetworkPolicy says which addresses a business call may reach. The
// endpoint is what the business's owner registered (a principal of the
// gate, or the admin), so the gate makes requests to addresses a tenant
// chose: server-side request forgery is the exposure. The policy is
// checked on the address actually dialled (after DNS resolution, on every
// connection), so a name that resolves to a refused address — at
// registration or later (DNS rebinding) — is refused too. Calls never go
// through an HTTP proxy (HTTP_PROXY is ignored: the check would see the
// proxy's address, not the business's) and never follow redirects.
//
// Always refused: unspecified (0.0.0.0, ::), link-local (169.254.0.0/16,
// where cloud metadata services answer, and fe80::/10), multicast and
// broadcast addresses. Refused when DenyPrivate is set: loopback
// (127.0.0.0/8, ::1) and private ranges (10/8, 172.16/12, 192.168/16,
// fc00::/7, and 100.64.0.0/10 shared address space). They are allowed by
// default because a gate's businesses commonly run beside it (a local
// adapter, a service in the same VPC); a deployment where tenants must
// not reach the gate's network sets --business-deny-private.
type NetworkPolicy struct {
	// DenyPrivate refuses loopback and private addresses.
	DenyPrivate bool
}

// errBlockedAddress is the error of a dial the policy refused.
var errBlockedAddress = errors.New("address refused by the network policy")

// cgnat is the shared address space of RFC 6598.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Allowed reports whether the policy lets a call reach addr, and why not.
func (p NetworkPolicy) Allowed(addr netip.Addr) error {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid(), addr.IsUnspecified():
		return fmt.Errorf("%w: %s is unspecified", errBlockedAddress, addr)
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is link-local", errBlockedAddress, addr)
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast(), addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%w: %s is multicast or broadcast", errBlockedAddress, addr)
	case p.DenyPrivate && addr.IsLoopback():
		return fmt.Errorf("%w: %s is loopback", errBlockedAddress, addr)
	case p.DenyPrivate && (addr.IsPrivate() || cgnat.Contains(addr)):
		return fmt.Errorf("%w: %s is private", errBlockedAddress, addr)
	}
	return nil
}

// control checks each dialled address against the policy, before the
// connection is made.
func (p NetworkPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address and port", errBlockedAddress, address)
	}
	return p.Allowed(ap.Addr())
}

// transport is the HTTP transport of calls under the policy: no proxy, the
// policy checked at each dial, bounded idle connections.
func (p NetworkPolicy) transport() *http.Transport {
	d := &net.Dialer{Timeout: DefaultCallTimeout, KeepAlive: 30 * time.Second, Control: p.control}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    DefaultCallTimeout,
		ResponseHeaderTimeout:  DefaultCallTimeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
}
