package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/a2aproxy"
)

// proxyFlags configure proxy mode: the A2A agents the gate fronts.
type proxyFlags struct {
	upstreams []string
	publicURL string
	timeout   time.Duration
}

func addProxyFlags(f *pflag.FlagSet) *proxyFlags {
	o := &proxyFlags{}
	f.StringArrayVar(&o.upstreams, "a2a-upstream", nil, "an A2A agent the gate fronts, NAME=URL (repeatable): its Agent Card and JSON-RPC at /a2a/proxy/NAME, every message intercepted as on POST /a2a/intercept")
	f.StringVar(&o.publicURL, "a2a-public-url", "", "the gate's URL as A2A callers reach it, written into the proxied Agent Cards (default: the scheme and Host of each card request)")
	f.DurationVar(&o.timeout, "a2a-upstream-timeout", a2aproxy.DefaultTimeout, "how long the gate waits for a proxied agent's answer to message/send before answering a JSON-RPC error")
	return o
}

// wrap returns h serving the proxied agents too (their paths go to the
// proxy, whose interceptor is h's own POST /a2a/intercept, in process;
// its request bodies bounded by the gate's A2A payload limit, maxPayload,
// and the envelope); h itself when no upstream is configured.
func (o *proxyFlags) wrap(h http.Handler, maxPayload int64, log *slog.Logger) (http.Handler, error) {
	if len(o.upstreams) == 0 {
		return h, nil
	}
	ups := make([]a2aproxy.Upstream, 0, len(o.upstreams))
	for _, s := range o.upstreams {
		u, err := a2aproxy.ParseUpstream(s)
		if err != nil {
			return nil, fmt.Errorf("--a2a-upstream: %w", err)
		}
		ups = append(ups, u)
	}
	p, err := a2aproxy.New(a2aproxy.Config{
		Upstreams: ups, Interceptor: a2aproxy.InProcess(h), PublicURL: o.publicURL,
		Timeout: o.timeout, MaxBodyBytes: maxPayload + a2aproxy.EnvelopeBytes, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	for _, u := range ups {
		log.Info("proxying an A2A agent", "name", u.Name, "upstream", u.URL.Redacted(), "path", a2aproxy.PathPrefix+u.Name)
	}
	return a2aproxy.Wrap(p, h), nil
}
