package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
)

// The Agent Policy Engine spec's environment variables (§2.1, §2.3), read
// when the flag (and its AGENTGATE_ variable) is not given.
const (
	executePolicyEnv    = "AGENR_EXECUTE_POLICY"
	maxExecuteAmountEnv = "AGENR_MAX_EXECUTE_AMOUNT"
)

// maxExecuteAmountCents bounds --max-execute-amount: 10¹⁵ cents, as the
// gate bounds the amounts it reads from a request.
const maxExecuteAmountCents = 1_000_000_000_000_000

// executeFlags are the options of executes through the gate
// (domain.ExecuteConfig): the execute policy mode and strict mode's
// amount ceiling.
type executeFlags struct {
	mode      string
	maxAmount int64
	f         *pflag.FlagSet
}

func addExecuteFlags(f *pflag.FlagSet) *executeFlags {
	d := domain.DefaultExecuteConfig()
	o := &executeFlags{f: f}
	f.StringVar(&o.mode, "execute-policy", d.Mode, "the execute policy of POST /agp/execute: open (no confirmation), confirm (an X-Confirmation-Token from POST /agp/execute/prepare is required) or strict (confirm, and an amount ceiling) (default: $"+executePolicyEnv+", else open)")
	f.Int64Var(&o.maxAmount, "max-execute-amount", d.MaxAmountCents, "strict mode's amount ceiling in cents: an execute whose request.amount_cents (or amount) is over it is refused QWED-EXEC-005 (403) (default: $"+maxExecuteAmountEnv+", else 100)")
	return o
}

// config returns the execute configuration the flags give, each flag
// winning over its AGENTGATE_ variable, which wins over the spec's
// AGENR_ one: nil when it is the default (a gate started without them
// records nothing new), an error when a value is not valid.
func (o *executeFlags) config() (*domain.ExecuteConfig, error) {
	d := domain.DefaultExecuteConfig()
	c := d
	c.Mode, c.MaxAmountCents = o.mode, o.maxAmount
	if v, ok := o.specEnv("execute-policy", executePolicyEnv); ok {
		c.Mode = v
	}
	if v, ok := o.specEnv("max-execute-amount", maxExecuteAmountEnv); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not a whole number of cents", maxExecuteAmountEnv, v)
		}
		c.MaxAmountCents = n
	}
	c.Mode = strings.ToLower(strings.TrimSpace(c.Mode))
	switch c.Mode {
	case domain.ExecuteModeOpen, domain.ExecuteModeConfirm, domain.ExecuteModeStrict:
	default:
		return nil, fmt.Errorf("--execute-policy %q: want open, confirm or strict", c.Mode)
	}
	if c.MaxAmountCents < 0 || c.MaxAmountCents > maxExecuteAmountCents {
		return nil, fmt.Errorf("--max-execute-amount %d: want 0 to %d cents", c.MaxAmountCents, int64(maxExecuteAmountCents))
	}
	if c == d {
		return nil, nil
	}
	c.ExpiredTokenKept = domain.DefaultExpiredTokenKept
	return &c, nil
}

// specEnv returns the value of the spec's variable env for flag, when
// neither the flag nor its AGENTGATE_ variable is given.
func (o *executeFlags) specEnv(flag, env string) (string, bool) {
	if o.f.Changed(flag) {
		return "", false
	}
	if _, ok := os.LookupEnv("AGENTGATE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))); ok {
		return "", false
	}
	return os.LookupEnv(env)
}
