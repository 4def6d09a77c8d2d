package main

import (
	"fmt"
	"net/http"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/httpapi"
)

// rateFlags configure the limits of the HTTP edge: the verify rate limit
// (QWED protocol v1.0 §10.3), the A2A edge limit (issue 13), the consumer
// policy engine's edge limit (issue 14), the limit on
// refused requests and the connection caps (issue 11).
type rateFlags struct {
	r        httpapi.RateLimit
	a2a      httpapi.RateLimit
	exec     httpapi.RateLimit
	refusals httpapi.RefusalLimit
	conns    httpapi.ConnLimit
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

func (o *rateFlags) refusalLimit() httpapi.RefusalLimit { return o.refusals }

// serve serves srv on its address with the connection caps (in place of
// srv.ListenAndServe): over TLS with the certificate of o.tls once it has
// started, else in cleartext (HTTP/2 only with --h2c).
func (o *rateFlags) serve(srv *http.Server) error {
	if o.tls != nil && o.tls.certs != nil {
		ln, err := httpapi.ListenForTLS(srv.Addr, o.conns)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", srv.Addr, err)
		}
		srv.TLSConfig = httpapi.TLSConfig(o.tls.certs.GetCertificate)
		return srv.ServeTLS(ln, "", "")
	}
	ln, err := httpapi.Listen(srv.Addr, o.conns)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", srv.Addr, err)
	}
	srv.Protocols = httpapi.Protocols(o.tls != nil && o.tls.h2c)
	return srv.Serve(ln)
}
