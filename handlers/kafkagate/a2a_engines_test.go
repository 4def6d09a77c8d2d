package kafkagate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	qengines "github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// TestIssue13_KafkaA2AEnginesDecide: on the Kafka gate, a qwed.a2a.message
// CloudEvent decided by a partition runs the real code engine on a code
// payload and the real logic engine (z3) on a logic payload's dsl before
// Decide (Config.Verifier reaches every partition's worker): code only the
// syntax tree sees as dangerous is blocked with the engine's finding, a DSL
// contradiction is blocked by the logic engine, code the engine cannot
// parse is an engine error (block_on_error), benign code is forwarded;
// each verdict is recorded with its command in the partition's log.
func TestIssue13_KafkaA2AEnginesDecide(t *testing.T) {
	_, brokers := broker(t)
	// The agents are allowlisted gate-wide by the configuration (serve's
	// --a2a-trusted-agents), there at start on every partition. (A
	// boundary change answered on the requests topic would do too: its
	// copies are on every partition before its answer, docs/ARCHITECTURE.md
	// "Review of the A2A transports and reads".)
	cfg := domain.DefaultConfig()
	a2aCfg := domain.DefaultA2AConfig()
	a2aCfg.TrustedAgents = []string{"agent-a", "agent-b"}
	cfg.A2A = &a2aCfg
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)
	ctx := context.Background()

	send := func(id string, pt a2a.PayloadType, payload string) domain.A2AReply {
		t.Helper()
		rep, err := c.Request(ctx, client.Command{Type: domain.CmdA2AMessage, ID: id, AgentID: "agent-a", APIKey: adminKey,
			Data: a2a.Message{SenderAgentID: "agent-a", ReceiverAgentID: "agent-b", PayloadType: pt, Payload: json.RawMessage(payload)}})
		if err != nil || rep.Status != 200 {
			t.Fatalf("%s: %+v %v", id, rep, err)
		}
		var r domain.A2AReply
		if err := json.Unmarshal(rep.Data, &r); err != nil || r.Attestation == "" {
			t.Fatalf("%s: %s %v", id, rep.Data, err)
		}
		return r
	}

	obfuscated := `{"code":"import posix\nposix.system(\"id\")"}`
	if r := a2a.CodeGuardPayload(json.RawMessage(obfuscated)); r.Blocked || r.Problem != nil {
		t.Fatalf("code_guard's patterns block %s on their own (%+v): pick a form only the engine sees", obfuscated, r)
	}
	r := send("code-posix", a2a.PayloadCode, obfuscated)
	found := false
	for _, f := range r.Details.Findings {
		found = found || f.Rule == "PY-PROC-001"
	}
	if r.Status != a2a.StatusBlocked || r.Engine != a2a.EngineCode || !found {
		t.Fatalf("posix.system: %+v", r)
	}
	if r := send("logic-unsat", a2a.PayloadLogic, `{"dsl":"(AND (GT x 5) (LT x 3))"}`); r.Status != a2a.StatusBlocked || r.Engine != a2a.EngineLogic {
		t.Fatalf("dsl contradiction: %+v", r)
	}
	if r := send("code-unparsable", a2a.PayloadCode, `{"code":"def ("}`); r.Status != a2a.StatusError || r.Shadow || r.Details.EngineError == "" {
		t.Fatalf("engine error: %+v", r)
	}
	if r := send("code-benign", a2a.PayloadCode, `{"code":"print(\"evaluate this\")"}`); r.Status != a2a.StatusForwarded {
		t.Fatalf("benign: %+v", r)
	}

	evs := recordedEvents(t, brokers, c.Source())
	for id, want := range map[string]struct {
		engine string
		status qengines.Status
	}{
		"code-posix": {"code", qengines.Blocked}, "logic-unsat": {"logic", qengines.Failed},
		"code-unparsable": {"code", qengines.Error}, "code-benign": {"code", qengines.Verified},
	} {
		ev := evs[id]
		if ev == nil || ev.Type != domain.EvA2AVerdict || ev.Command == nil || ev.Command.Verdict == nil ||
			ev.Command.Verdict.Engine != want.engine || ev.Command.Verdict.Status != want.status {
			t.Fatalf("%s: recorded %+v, want the %s engine's %s on the command", id, ev, want.engine, want.status)
		}
	}
}
