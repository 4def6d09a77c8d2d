package main

import (
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
)

// The A2A flags give nil (the defaults, nothing recorded) unless one
// differs; QWED_A2A_TRUSTED_AGENTS seeds the allowlist when the flag is not
// given; lists are trimmed, sorted and deduplicated; bad values are
// refused at start.
func TestA2AFlags(t *testing.T) {
	parse := func(args ...string) (*domain.A2AConfig, error) {
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		o := addA2AFlags(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		return o.config()
	}
	t.Setenv(a2aTrustedEnv, "")
	if c, err := parse(); c != nil || err != nil {
		t.Fatalf("no flags: %+v %v", c, err)
	}
	t.Setenv(a2aTrustedEnv, " agent-B,agent-A ,agent-B")
	c, err := parse("--a2a-rate-per-minute=10", "--a2a-block-on-error=false", "--a2a-idle-evict=1m", "--a2a-bypass-agents=z,y")
	if err != nil || c == nil {
		t.Fatalf("flags: %+v %v", c, err)
	}
	if !slices.Equal(c.TrustedAgents, []string{"agent-A", "agent-B"}) || !slices.Equal(c.BypassAgents, []string{"y", "z"}) ||
		c.RatePerMinute != 10 || c.BlockOnError || c.IdleEvict != domain.Duration(time.Minute) || c.Burst != 60 || !c.EnableCodeVerification {
		t.Fatalf("config %+v", c)
	}
	if c, _ := parse("--a2a-trusted-agents=x"); !slices.Equal(c.TrustedAgents, []string{"x"}) {
		t.Fatalf("the flag does not win over the environment: %+v", c.TrustedAgents)
	}
	for _, bad := range [][]string{{"--a2a-rate-per-minute=0"}, {"--a2a-burst=-1"}, {"--a2a-max-payload-bytes=0"}, {"--a2a-idle-evict=0s"},
		{"--a2a-trusted-agents=a\tb"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
