package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
)

// The worker's clock expires confirmation tokens (the Agent Policy Engine
// spec §2.2: "expired tokens are rejected and cleaned up automatically"):
// once the TTL has passed, a tick records execute.timers naming the
// token, and the gate no longer holds it. The tick is the worker's, so it
// runs in both deployments (the Kafka gate runs one worker per partition).
func TestWorkerExpiresConfirmationTokens(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	cfg := domain.DefaultConfig()
	cfg.Execute = &domain.ExecuteConfig{Mode: domain.ExecuteModeConfirm, MaxAmountCents: 100, TokenTTL: domain.Duration(5 * time.Minute)}
	g := gatetest.StartWith(t, embedded.Options{DataDir: t.TempDir(), AdminKey: "admin", Clock: clock.Now, Config: &cfg})
	defer g.Stop(t)
	agent := g.Submit(t, gatetest.Register("a1", 2)).AgentID
	g.Submit(t, &domain.Command{Type: domain.CmdBusiness, Principal: domain.AdminPrincipal, Request: domain.RequestID{Source: "test", ID: "b"},
		Business: &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop", Endpoint: "https://shop.example", Currency: "USD"}}})
	req := json.RawMessage(`{"amount_cents":5}`)
	h, err := domain.RequestHashOf(req)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.Repeat("c", 64)
	ev := g.Submit(t, &domain.Command{Type: domain.CmdPrepareExecute, AgentID: agent, TokenHash: command.HashSecret(gatetest.Token),
		Request: domain.RequestID{Source: "test", ID: "p"}, Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: req, RequestHash: h, TokenHash: tok}})
	if ev.Type != domain.EvExecutePrepared {
		t.Fatalf("prepare: %s %v", ev.Type, ev.Error)
	}
	clock.Advance(5 * time.Minute)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var timers *domain.ExecuteTimers
		for _, ev := range gatetest.LogEvents(t, g.Log) {
			if ev.Type == domain.EvExecuteTimers {
				timers = ev.Timers
			}
		}
		if timers != nil {
			if len(timers.TokensExpired) != 1 || timers.TokensExpired[0] != tok {
				t.Fatalf("timers %+v", timers)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no execute.timers event was recorded")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ev = g.Submit(t, &domain.Command{Type: domain.CmdExecute, AgentID: agent, TokenHash: command.HashSecret(gatetest.Token),
		Request: domain.RequestID{Source: "test", ID: "x"}, Execute: &domain.ExecuteRequest{BusinessID: "shop", Request: req, RequestHash: h, TokenHash: tok}})
	if ev.Error == nil || ev.Error.Code != domain.CodeExecTokenInvalid {
		t.Fatalf("an execute with the cleaned token: %s %+v", ev.Type, ev.Error)
	}
}
