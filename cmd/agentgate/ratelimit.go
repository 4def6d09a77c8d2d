package main

import (
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/httpapi"
)

// rateFlags configure the limits of the HTTP edge: the verify rate limit
// (QWED protocol v1.0 §10.3), the A2A edge limit (issue 13), the consumer
// policy engine's edge limit (issue 14), the limit on principal-scoped
// writes (issue 16), the limit on
// refused requests and the connection caps (issue 11).
type rateFlags struct {
	r         httpapi.RateLimit
	a2a       httpapi.RateLimit
	exec      httpapi.RateLimit
	principal httpapi.RateLimit
	refusals  httpapi.RefusalLimit
	conns     httpapi.ConnLimit
	// tls is serve's TLS configuration (set by serve; nil: cleartext).
	tls *tlsFlags
}

func addRateFlags(f *pflag.FlagSet) *rateFlags {
	o := &rateFlags{}
	f.Float64Var(&o.r.PerPrincipal, "verify-rate", 50, "POST /verify and qwed.verify requests per second per principal (0: no limit); over it QWED-AUTH-004 (429)")
	f.IntVar(&o.r.Burst, "verify-burst", 100, "requests a principal may send at once above --verify-rate")
	f.Float64Var(&o.r.Global, "verify-global-rate", 500, "POST /verify and qwed.verify requests per second of all principals together (0: no limit)")
	f.IntVar(&o.r.GlobalBurst, "verify-global-burst", 1000, "requests all principals may send at once above --verify-global-rate")
	f.Float64Var(&o.a2a.PerPrincipal, "a2a-edge-rate", 1000, "A2A messages and boundary writes (HTTP) per second per credential (API key or agent token; 0: no limit), before the pairs' own token buckets; over it QWED-AUTH-004 (429)")
	f.IntVar(&o.a2a.Burst, "a2a-edge-burst", 2000, "requests a credential may send at once above --a2a-edge-rate")
	f.Float64Var(&o.a2a.Global, "a2a-edge-global-rate", 20000, "A2A messages and boundary writes (HTTP) per second of all credentials together (0: no limit)")
	f.IntVar(&o.a2a.GlobalBurst, "a2a-edge-global-burst", 40000, "requests all credentials may send at once above --a2a-edge-global-rate")
	f.Float64Var(&o.exec.PerPrincipal, "execute-edge-rate", 1000, "execute, prepare, business and policy writes (HTTP) per second per credential (API key or agent token; 0: no limit); over it QWED-AUTH-004 (429)")
	f.IntVar(&o.exec.Burst, "execute-edge-burst", 2000, "requests a credential may send at once above --execute-edge-rate")
	f.Float64Var(&o.exec.Global, "execute-edge-global-rate", 20000, "execute, prepare, business and policy writes (HTTP) per second of all credentials together (0: no limit)")
	f.IntVar(&o.exec.GlobalBurst, "execute-edge-global-burst", 40000, "requests all credentials may send at once above --execute-edge-global-rate")
	f.Float64Var(&o.principal.PerPrincipal, "principal-write-rate", 5, "principal-scoped writes (PUT /principals/{id}/tools and /permissions, key rotation and revocation) per second per API key (0: no limit); over it QWED-AUTH-004 (429)")
	f.IntVar(&o.principal.Burst, "principal-write-burst", 20, "principal-scoped writes an API key may send at once above --principal-write-rate")
	f.Float64Var(&o.principal.Global, "principal-write-global-rate", 200, "principal-scoped writes per second of all API keys together (0: no limit)")
	f.IntVar(&o.principal.GlobalBurst, "principal-write-global-burst", 400, "principal-scoped writes all API keys may send at once above --principal-write-global-rate")
	f.Float64Var(&o.refusals.PerAddress, "refusal-rate", 1, "refused HTTP requests (400, 401, 403, 404, 405, 413) per second per client address (0: no limit); over it every request of the address gets QWED-AUTH-004 (429)")
	f.IntVar(&o.refusals.Burst, "refusal-burst", 30, "refused requests a client address may have at once above --refusal-rate")
	f.Float64Var(&o.refusals.Global, "refusal-global-rate", 100, "refused HTTP requests per second of all addresses together (0: no limit); over it addresses refused lately get 429")
	f.IntVar(&o.refusals.GlobalBurst, "refusal-global-burst", 1000, "refused requests all addresses may have at once above --refusal-global-rate")
	f.IntVar(&o.conns.Max, "max-connections", httpapi.DefaultMaxConnections, "HTTP connections open at once (0: no cap); past it a connection is answered QWED-SYS-002 (503) and closed")
	f.IntVar(&o.conns.PerAddress, "max-connections-per-address", httpapi.DefaultMaxConnectionsPerAddress, "HTTP connections open at once from one client address (0: no cap); past it QWED-AUTH-004 (429) and closed")
	return o
}

func (o *rateFlags) limit() httpapi.RateLimit { return o.r }

func (o *rateFlags) a2aLimit() httpapi.RateLimit { return o.a2a }

func (o *rateFlags) executeLimit() httpapi.RateLimit { return o.exec }

func (o *rateFlags) principalLimit() httpapi.RateLimit { return o.principal }

func (o *rateFlags) refusalLimit() httpapi.RefusalLimit { return o.refusals }

// listen binds srv's address with the connection caps: for TLS when o.tls
// has a certificate, else in cleartext. Binding before serving lets serve
// announce the address it got (port 0 picks a free one) and fail before
// announcing anything when the address is taken.
func (o *rateFlags) listen(srv *http.Server) (net.Listener, error) {
	var (
		ln  net.Listener
		err error
	)
	if o.tlsOn() {
		ln, err = httpapi.ListenForTLS(srv.Addr, o.conns)
	} else {
		ln, err = httpapi.Listen(srv.Addr, o.conns)
	}
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", srv.Addr, err)
	}
	return ln, nil
}

func (o *rateFlags) tlsOn() bool { return o.tls != nil && o.tls.certs != nil }

// announce prints the line that says where serve listens, on stdout:
// "agentgate listening on http://HOST:PORT" (https with a certificate),
// the address ln was bound to. Tests and scripts that start serve with
// --http 127.0.0.1:0 read their port from it.
func (o *rateFlags) announce(ln net.Listener) {
	scheme := "http"
	if o.tlsOn() {
		scheme = "https"
	}
	fmt.Fprintf(os.Stdout, "agentgate listening on %s://%s\n", scheme, ln.Addr())
}

// serve serves srv on ln (from listen) until srv is shut down: over TLS
// with the certificate of o.tls, else in cleartext (HTTP/2 only with
// --h2c).
func (o *rateFlags) serve(srv *http.Server, ln net.Listener) error {
	if o.tlsOn() {
		srv.TLSConfig = httpapi.TLSConfig(o.tls.certs.GetCertificate)
		return srv.ServeTLS(ln, "", "")
	}
	srv.Protocols = httpapi.Protocols(o.tls != nil && o.tls.h2c)
	return srv.Serve(ln)
}
