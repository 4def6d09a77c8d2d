package domain

import (
	"testing"
	"time"
)

// A consumer's home partition key, and the execute configuration a gate
// runs with when none was recorded.
func TestHomeKeyAndDefaultExecuteConfig(t *testing.T) {
	if got := HomeKey("org_1"); got != "consumer/org_1" {
		t.Fatalf("HomeKey = %q", got)
	}
	c := initialConfig()
	if got := c.ExecuteConfig(); got != (ExecuteConfig{Mode: ExecuteModeOpen, MaxAmountCents: 100, TokenTTL: Duration(5 * time.Minute)}) {
		t.Fatalf("default execute config %+v", got)
	}
	c.Execute = &ExecuteConfig{Mode: ExecuteModeStrict, MaxAmountCents: 7, TokenTTL: Duration(time.Minute)}
	if got := c.ExecuteConfig(); got.Mode != ExecuteModeStrict || got.MaxAmountCents != 7 {
		t.Fatalf("recorded execute config %+v", got)
	}
}

// Every command of the consumer policy engine sent without its payload is
// refused with a catalogued code, and changes nothing.
func TestConsumerPolicyCommandsWithoutPayloadAreRefused(t *testing.T) {
	at := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	for _, typ := range []CommandType{CmdBusiness, CmdPrepareExecute, CmdExecute, CmdExecuteOutcome, CmdPolicy, CmdWebhook, CmdDelivery} {
		s := NewState()
		ev := Decide(s, Env{Now: at, Seq: 1}, &Command{Type: typ, Request: RequestID{Source: "http", ID: "r1"}, Principal: "org_1"})
		if ev == nil || ev.Type != EvCommandRejected || ev.Error == nil || !ev.Error.Code.Known() {
			t.Fatalf("%s without payload: %+v", typ, ev)
		}
		Apply(s, ev)
		if s.Exec != nil {
			t.Fatalf("%s: a refusal changed the state: %+v", typ, s.Exec)
		}
	}
}
