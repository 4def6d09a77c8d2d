package main

import (
	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/httpapi"
)

// rateFlags configure the verify rate limit (seed 002 §10.3).
type rateFlags struct{ r httpapi.RateLimit }

func addRateFlags(f *pflag.FlagSet) *rateFlags {
	o := &rateFlags{}
	f.Float64Var(&o.r.PerPrincipal, "verify-rate", 50, "POST /verify and qwed.verify requests per second per principal (0: no limit); over it QWED-AUTH-004 (429)")
	f.IntVar(&o.r.Burst, "verify-burst", 100, "requests a principal may send at once above --verify-rate")
	f.Float64Var(&o.r.Global, "verify-global-rate", 500, "POST /verify and qwed.verify requests per second of all principals together (0: no limit)")
	f.IntVar(&o.r.GlobalBurst, "verify-global-burst", 1000, "requests all principals may send at once above --verify-global-rate")
	return o
}

func (o *rateFlags) limit() httpapi.RateLimit { return o.r }
