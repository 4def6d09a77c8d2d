package embedded_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
)

// The embedded gate decides AgentMessages end to end: bodies built by the
// transport's path (command.A2AMessage), the configured allowlist and
// bucket, a pair blocked over the boundary route, answers rendered with
// their statuses. A restart under the same configuration records no new
// configuration and keeps the boundary and the buckets (restored from the
// projections); replay --verify re-decides the log byte for byte.
func TestA2AEndToEnd(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC))
	a := domain.DefaultA2AConfig()
	a.TrustedAgents, a.RatePerMinute, a.Burst = []string{"agent-A", "agent-B", "agent-C"}, 2, 2
	cfg := domain.DefaultConfig()
	cfg.A2A = &a
	opts := embedded.Options{DataDir: dir, AdminKey: "admin", Clock: clock.Now, Config: &cfg}
	g := gatetest.StartWith(t, opts)
	n := 0
	do := func(ep *command.Endpoint, in command.Input) (int, string, string) {
		t.Helper()
		n++
		b, r := command.HTTP.Build(ep, &in, &command.Credentials{Principal: "org_1"}, domain.RequestID{Source: "http", ID: "req-" + string(rune('a'+n))})
		if r != nil {
			t.Fatalf("building: %+v", r.Err)
		}
		ev := g.Submit(t, b.Command)
		status, body, rej := b.Reply(ev)
		if rej != nil {
			t.Fatalf("reply: %+v", rej.Err)
		}
		return status, string(body), command.A2ARetryAfter(ev)
	}
	msg := func(from, to string) command.Input {
		return command.Input{Body: []byte(`{"sender_agent_id":"` + from + `","receiver_agent_id":"` + to +
			`","payload_type":"financial_transaction","payload":{"data":{"claimed_total":"150.00","line_items":[{"amount":50,"quantity":3}]}}}`)}
	}
	for i := range 2 {
		if status, body, _ := do(command.A2AMessage, msg("agent-A", "agent-B")); status != 200 || !strings.Contains(body, `"status":"forwarded"`) ||
			!strings.Contains(body, `"engine_used":"finance_guard"`) || !strings.Contains(body, `"attestation_jwt":"ey`) {
			t.Fatalf("message %d: %d %s", i, status, body)
		}
	}
	if status, body, retry := do(command.A2AMessage, msg("agent-A", "agent-B")); status != 429 || retry != "30" || !strings.Contains(body, `"rate_limited"`) {
		t.Fatalf("third: %d %q %s", status, retry, body)
	}
	if status, body, _ := do(command.A2AMessage, msg("agent-A", "stranger")); status != 200 || !strings.Contains(body, `"blocked"`) ||
		!strings.Contains(body, "not allowlisted") {
		t.Fatalf("stranger: %d %s", status, body)
	}
	if status, body, _ := do(command.A2ABlockPair, command.Input{Body: []byte(`{"sender":"agent-C","receiver":"agent-B"}`)}); status != 200 ||
		body != `{"boundary":"org_1","op":"block_pair","sender":"agent-C","receiver":"agent-B"}` {
		t.Fatalf("block pair: %d %s", status, body)
	}
	if _, body, _ := do(command.A2AMessage, msg("agent-C", "agent-B")); !strings.Contains(body, `"blocked"`) {
		t.Fatalf("blocked pair: %s", body)
	}
	g.Stop(t)

	g = gatetest.StartWith(t, opts)
	defer g.Stop(t)
	if status, _, _ := do(command.A2ATrust, command.Input{AgentID: "agent-D"}); status != 200 {
		t.Fatalf("trust after the restart: %d", status)
	}
	configured := 0
	for _, ev := range gatetest.LogEvents(t, g.Log) {
		if ev.Type == domain.EvConfigured {
			configured++
		}
	}
	if configured != 1 {
		t.Fatalf("%d gate.configured events: the restart under the same configuration recorded it again", configured)
	}
	if status, _, retry := do(command.A2AMessage, msg("agent-A", "agent-B")); status != 429 || retry != "30" {
		t.Fatalf("the bucket did not survive the restart: %d %q", status, retry)
	}
	if _, body, _ := do(command.A2AMessage, msg("agent-C", "agent-B")); !strings.Contains(body, "pair 'agent-C' -\\u003e 'agent-B' is blocked") {
		t.Fatalf("the boundary did not survive the restart: %s", body)
	}
	clock.Advance(30 * time.Second)
	if status, _, _ := do(command.A2AMessage, msg("agent-A", "agent-B")); status != 200 {
		t.Fatalf("the bucket did not refill: %d", status)
	}
	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay: %v %s %v", err, rep.ProjectionDiff, rep.Mismatches)
	}
}
