package main

import (
	"os"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agentgate/agentgate/domain"
)

// The execute flags give nil (the defaults, nothing recorded) unless one
// differs; the Agent Policy Engine spec's AGENR_EXECUTE_POLICY and
// AGENR_MAX_EXECUTE_AMOUNT are read when neither the flag nor its
// AGENTGATE_ variable is given (the flag wins, then AGENTGATE_); bad
// values are refused at start.
func TestExecuteFlags(t *testing.T) {
	envs := []string{executePolicyEnv, maxExecuteAmountEnv, "AGENTGATE_EXECUTE_POLICY", "AGENTGATE_MAX_EXECUTE_AMOUNT"}
	for _, n := range envs {
		t.Setenv(n, "") // restored at the end of the test
		if err := os.Unsetenv(n); err != nil {
			t.Fatal(err)
		}
	}
	// parse parses args as serve does: the flags, then bindEnv.
	parse := func(args ...string) (*domain.ExecuteConfig, error) {
		t.Helper()
		cmd := &cobra.Command{Use: "serve"}
		o := addExecuteFlags(cmd.Flags())
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := bindEnv(cmd); err != nil {
			return nil, err
		}
		return o.config()
	}
	want := func(args []string, mode string, max int64) {
		t.Helper()
		c, err := parse(args...)
		if err != nil || c == nil || c.Mode != mode || c.MaxAmountCents != max || c.TokenTTL != domain.DefaultExecuteConfig().TokenTTL {
			t.Fatalf("%v: config %+v %v, want mode %s max %d", args, c, err, mode, max)
		}
	}
	if c, err := parse(); c != nil || err != nil {
		t.Fatalf("no flags: %+v %v", c, err)
	}
	if c, err := parse("--execute-policy=open", "--max-execute-amount=100"); c != nil || err != nil {
		t.Fatalf("the defaults given as flags: %+v %v, want nil", c, err)
	}
	want([]string{"--execute-policy=strict", "--max-execute-amount=250"}, domain.ExecuteModeStrict, 250)

	t.Setenv(executePolicyEnv, "confirm")
	t.Setenv(maxExecuteAmountEnv, "500")
	want(nil, domain.ExecuteModeConfirm, 500)
	want([]string{"--execute-policy=strict"}, domain.ExecuteModeStrict, 500)
	want([]string{"--max-execute-amount=7"}, domain.ExecuteModeConfirm, 7)
	t.Setenv("AGENTGATE_EXECUTE_POLICY", "strict")
	t.Setenv("AGENTGATE_MAX_EXECUTE_AMOUNT", "9")
	want(nil, domain.ExecuteModeStrict, 9)
	want([]string{"--execute-policy=open", "--max-execute-amount=8"}, domain.ExecuteModeOpen, 8)
	for _, n := range envs[2:] {
		if err := os.Unsetenv(n); err != nil {
			t.Fatal(err)
		}
	}

	for _, bad := range []struct {
		args []string
		env  string
	}{
		{args: []string{"--execute-policy=lenient"}},
		{args: []string{"--max-execute-amount=-1"}},
		{args: []string{"--max-execute-amount=1000000000000001"}},
		{env: "ten"},
	} {
		t.Setenv(maxExecuteAmountEnv, "500")
		if bad.env != "" {
			t.Setenv(maxExecuteAmountEnv, bad.env)
		}
		if _, err := parse(bad.args...); err == nil {
			t.Errorf("%v %q accepted", bad.args, bad.env)
		}
	}
}
