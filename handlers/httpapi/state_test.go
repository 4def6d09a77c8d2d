package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
	"github.com/agentgate/agentgate/schemas/openapi"
)

// withLog serves the API of tg with Config.Log set (time travel).
func withLog(t *testing.T, tg *testGate) *testGate {
	t.Helper()
	h := New(Config{
		Gate: tg.gate.Worker, Store: tg.gate.Store, AdminKeyHash: tg.gate.AdminKeyHash, JWKS: tg.gate.Keyring.JWKS,
		Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: tg.clock.Now,
		Log: tg.gate.Log,
	})
	srv := httptest.NewServer(openapi.Hook(t, h))
	t.Cleanup(srv.Close)
	cp := *tg
	cp.srv, cp.client = srv, srv.Client()
	return &cp
}

// stateAt reads GET /agents/{id}/state?query and decodes a 200 answer.
func stateAt(t *testing.T, g *testGate, ag agent, query string) timetravel.AgentStateView {
	t.Helper()
	r := g.do("GET", "/agents/"+ag.id+"/state?"+query, apiKey(ag.key), nil)
	if r.status != http.StatusOK {
		t.Fatalf("state?%s: %d %s", query, r.status, r.body)
	}
	var v timetravel.AgentStateView
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAgentStateTimeTravel pins GET /agents/{id}/state (issue 5): at a
// seq or a time it answers the trust level, budget used and remaining,
// pending approvals and conversations as they were then, with the reads'
// authentication and clear errors for positions outside the agent's life.
func TestAgentStateTimeTravel(t *testing.T) {
	tg := newTestGate(t, gateOptions{})
	g := withLog(t, tg)
	key := g.issueKey("org_tt")
	ag := g.register(key, "org_tt", 2, map[string]any{"max_daily_cost_usd": 1.0})
	regSeq := g.head()

	var seqs []uint64
	var times []time.Time
	for i := 1; i <= 3; i++ {
		g.clock.Advance(time.Minute)
		body := verifyReq("calculate", fmt.Sprintf("%d+1", i), "conv-a", i)
		body["action"].(map[string]any)["estimated_cost_usd"] = 0.25
		if r := g.do("POST", "/agents/"+ag.id+"/verify", bearerH(ag.token), body); r.status != http.StatusOK {
			t.Fatalf("verify %d: %d %s", i, r.status, r.body)
		}
		seqs = append(seqs, g.head())
		times = append(times, g.clock.Now())
	}
	// A high-risk write at trust 2 waits for a principal.
	g.clock.Advance(time.Minute)
	if r := g.do("POST", "/agents/"+ag.id+"/verify", bearerH(ag.token),
		verifyReq("database_write", "DELETE FROM orders WHERE id = 7", "conv-b", 1)); r.status != http.StatusAccepted && r.status != http.StatusOK {
		t.Fatalf("pending verify: %d %s", r.status, r.body)
	}
	pendingSeq := g.head()
	g.clock.Advance(time.Minute)
	if r := g.do("POST", "/agents/"+ag.id+"/trust-level", apiKey(key), map[string]any{"trust_level": 0, "reason": "audit"}); r.status >= 300 {
		t.Fatalf("setting trust: %d %s", r.status, r.body)
	}

	for i, seq := range seqs {
		v := stateAt(t, g, ag, fmt.Sprintf("at_seq=%d", seq))
		wantUsed := domain.USD(250_000 * (i + 1))
		if v.AtSeq != seq || v.TrustLevel != 2 || v.Budget.Cost.CurrentDailyUSD != wantUsed ||
			v.Remaining.DailyCostUSD == nil || *v.Remaining.DailyCostUSD != domain.MicrosPerUSD-wantUsed ||
			len(v.Conversations) != 1 || v.Conversations[0].LastStep != int64(i+1) || len(v.OpenApprovals) != 0 {
			t.Fatalf("state at seq %d: %+v", seq, v)
		}
		// at_time answers the last event at or before the time.
		if w := stateAt(t, g, ag, "at_time="+times[i].Format(time.RFC3339Nano)); w.AtSeq != seq {
			t.Fatalf("at_time %s gave seq %d, want %d", times[i], w.AtSeq, seq)
		}
	}
	v := stateAt(t, g, ag, fmt.Sprintf("at_seq=%d", pendingSeq))
	if len(v.OpenApprovals) != 1 || v.OpenApprovals[0].Status != domain.ApprovalPending || len(v.Conversations) != 2 {
		t.Fatalf("state with the pending approval: %+v", v)
	}
	if now := stateAt(t, g, ag, fmt.Sprintf("at_seq=%d", g.head())); now.TrustLevel != 0 {
		t.Fatalf("state after the trust change: trust %d", now.TrustLevel)
	}

	// Reads are authenticated like GET /agents/{id}: the agent's own token
	// works, another principal's key does not.
	if r := g.do("GET", fmt.Sprintf("/agents/%s/state?at_seq=%d", ag.id, seqs[0]), bearerH(ag.token), nil); r.status != http.StatusOK {
		t.Fatalf("agent token: %d %s", r.status, r.body)
	}
	other := g.issueKey("org_other")
	for _, c := range []struct {
		h      hdr
		query  string
		status int
		code   domain.Code
	}{
		{nil, "at_seq=1", http.StatusUnauthorized, domain.CodeMissingAPIKey},
		{apiKey(other), "at_seq=1", http.StatusForbidden, domain.CodeForbidden},
		{apiKey(key), "", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), fmt.Sprintf("at_seq=%d&at_time=2026-03-02T10:00:00Z", seqs[0]), http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), "at_seq=0", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), "at_seq=x", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), "at_seq=999999", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), "at_time=yesterday", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), "at_time=2020-01-01T00:00:00Z", http.StatusBadRequest, domain.CodeInvalidRequest},
		{apiKey(key), fmt.Sprintf("at_seq=%d", regSeq-1), http.StatusNotFound, domain.CodeNotFound},
	} {
		r := g.do("GET", "/agents/"+ag.id+"/state?"+c.query, c.h, nil)
		if r.status != c.status || r.errorCode(t) != string(c.code) {
			t.Errorf("state?%s: %d %s, want %d %s", c.query, r.status, r.body, c.status, c.code)
		}
	}

	// Without the log (the Kafka read model) the endpoint is unavailable.
	if r := tg.do("GET", fmt.Sprintf("/agents/%s/state?at_seq=%d", ag.id, seqs[0]), apiKey(key), nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("without a log: %d %s", r.status, r.body)
	}
}
