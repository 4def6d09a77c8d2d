package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/attest"
)

// maxBusinessAttempts bounds --business-attempts.
const maxBusinessAttempts = 20

// adapterFlags are the options of the calls to businesses (issue 14).
type adapterFlags struct {
	denyPrivate bool
	timeout     time.Duration
	attempts    int
}

func addAdapterFlags(f *pflag.FlagSet) *adapterFlags {
	o := &adapterFlags{}
	f.BoolVar(&o.denyPrivate, "business-deny-private", false, "refuse business calls to loopback and private addresses (link-local and metadata addresses are always refused)")
	f.DurationVar(&o.timeout, "business-timeout", adapter.DefaultCallTimeout, "how long one attempt of a business call may take")
	f.IntVar(&o.attempts, "business-attempts", adapter.DefaultAttempts, "attempts of a business call (transport errors, 408, 429, 5xx) before it is recorded as failed")
	return o
}

// caller returns the business caller the flags configure, signing as node
// nodeID with kr.
func (o *adapterFlags) caller(kr *attest.Keyring, nodeID string) (*adapter.Caller, error) {
	if o.timeout <= 0 || o.attempts < 1 || o.attempts > maxBusinessAttempts {
		return nil, fmt.Errorf("--business-timeout must be positive and --business-attempts 1 to %d", maxBusinessAttempts)
	}
	return adapter.NewCaller(adapter.CallerConfig{
		Keyring: kr, NodeID: nodeID, Timeout: o.timeout, Attempts: o.attempts,
		Network: adapter.NetworkPolicy{DenyPrivate: o.denyPrivate},
	})
}
