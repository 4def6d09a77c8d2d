package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
)

// a2aTrustedEnv is QWED A2A's environment variable of the gate-wide
// allowlist (comma-separated agent ids), read when --a2a-trusted-agents
// (and its AGENTGATE_A2A_TRUSTED_AGENTS) is not given.
const a2aTrustedEnv = "QWED_A2A_TRUSTED_AGENTS"

// a2aFlags are the options of agent-to-agent interception (domain.A2AConfig).
type a2aFlags struct {
	c               domain.A2AConfig
	trusted, bypass []string
	idle            time.Duration
	f               *pflag.FlagSet
}

func addA2AFlags(f *pflag.FlagSet) *a2aFlags {
	d := domain.DefaultA2AConfig()
	o := &a2aFlags{f: f}
	f.StringSliceVar(&o.trusted, "a2a-trusted-agents", nil, "A2A: the gate-wide allowlist, comma-separated agent ids (default: $"+a2aTrustedEnv+"); in strict mode sender and receiver must each be allowlisted")
	f.StringSliceVar(&o.bypass, "a2a-bypass-agents", nil, "A2A: senders whose messages skip verification (engine bypass; QWED A2A's trusted_agents), comma-separated")
	f.Int64Var(&o.c.RatePerMinute, "a2a-rate-per-minute", d.RatePerMinute, "A2A: token bucket refill per sender→receiver pair, messages a minute")
	f.Int64Var(&o.c.Burst, "a2a-burst", d.Burst, "A2A: token bucket capacity per pair")
	f.DurationVar(&o.idle, "a2a-idle-evict", time.Duration(d.IdleEvict), "A2A: a pair's bucket idle this long (and full again) is evicted")
	f.BoolVar(&o.c.BlockOnError, "a2a-block-on-error", d.BlockOnError, "A2A: an engine error blocks the message (false: shadow mode, forwarded and marked shadow)")
	f.Int64Var(&o.c.MaxPayloadSizeBytes, "a2a-max-payload-bytes", d.MaxPayloadSizeBytes, "A2A: largest payload (JSON text) of a message; over it QWED-REQ-004 (413)")
	f.BoolVar(&o.c.DefaultAllow, "a2a-default-allow", d.DefaultAllow, "A2A: allow agents not allowlisted (false: strict deny-all)")
	f.BoolVar(&o.c.EnableFinancialVerification, "a2a-enable-financial-verification", d.EnableFinancialVerification, "A2A: verify financial_transaction payloads with finance_guard (false: passthrough)")
	f.BoolVar(&o.c.EnableLogicVerification, "a2a-enable-logic-verification", d.EnableLogicVerification, "A2A: verify logic_assertion payloads with logic_guard (false: passthrough)")
	f.BoolVar(&o.c.EnableCodeVerification, "a2a-enable-code-verification", d.EnableCodeVerification, "A2A: verify code_execution payloads with code_guard (false: passthrough)")
	return o
}

// config returns the A2A configuration the flags give: nil when it is the
// default (a gate started without A2A flags records nothing new), an
// error when a value is out of its bounds.
func (o *a2aFlags) config() (*domain.A2AConfig, error) {
	c := o.c
	c.IdleEvict = domain.Duration(o.idle)
	trusted := o.trusted
	if !o.f.Changed("a2a-trusted-agents") && os.Getenv("AGENTGATE_A2A_TRUSTED_AGENTS") == "" {
		if v, ok := os.LookupEnv(a2aTrustedEnv); ok {
			trusted = strings.Split(v, ",")
		}
	}
	c.TrustedAgents = domain.NormalizeA2AAgents(trimAll(trusted))
	c.BypassAgents = domain.NormalizeA2AAgents(trimAll(o.bypass))
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("checking the A2A flags: %s", err.Message)
	}
	if d := domain.DefaultA2AConfig(); c.Equal(&d) {
		return nil, nil
	}
	return &c, nil
}

func trimAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.TrimSpace(s)
	}
	return out
}
