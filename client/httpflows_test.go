package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/a2aproxy"
)

// echoAgent is a minimal A2A agent over real HTTP: its card names its
// JSON-RPC endpoint /rpc, which echoes the first part's text.
func echoAgent(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"name": "Treasury Agent", "version": "1.0.0",
			"supportedInterfaces": []any{map[string]any{"url": srv.URL + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
			"skills":              []any{map[string]any{"id": "echo", "name": "Echo"}},
		})
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Message struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Params.Message.Parts) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"message":{"messageId":"answer","role":"ROLE_AGENT","parts":[{"text":%q}]}}}`,
			req.ID, "echo: "+req.Params.Message.Parts[0].Text)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTPClientA2AProxy: the fronted agent's card through the gate, a
// JSON-RPC request forwarded once its parts pass, and the gate's refusal
// as a JSON-RPC error: results, not errors.
func TestHTTPClientA2AProxy(t *testing.T) {
	ctx := context.Background()
	agent := echoAgent(t)
	g := startGate(t, func(h http.Handler) http.Handler {
		u, err := a2aproxy.ParseUpstream("treasury=" + agent.URL)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a2aproxy.New(a2aproxy.Config{Upstreams: []a2aproxy.Upstream{u}, Interceptor: a2aproxy.InProcess(h), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return a2aproxy.Wrap(p, h)
	})
	acme := g.principal(t, "org_acme")
	for _, legacy := range []bool{false, true} {
		card, err := acme.GetA2AAgentCard(ctx, "treasury", legacy)
		if err != nil || !bytes.Contains(card, []byte(g.URL+"/a2a/proxy/treasury")) {
			t.Fatalf("GetA2AAgentCard(legacy %v): %s %v", legacy, card, err)
		}
	}
	send := func(id int, text string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": "SendMessage", "params": map[string]any{"message": map[string]any{
			"messageId": fmt.Sprintf("m-%d", id), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}},
			"metadata": map[string]any{"sender_agent_id": "procurement"}}}}
	}
	// Untrusted sender: the gate's refusal is the JSON-RPC answer.
	refused, err := acme.A2AProxy(ctx, "treasury", send(1, "hello"))
	if err != nil || !bytes.Contains(refused, []byte(`"error"`)) || bytes.Contains(refused, []byte("echo:")) {
		t.Fatalf("A2AProxy from an untrusted sender: %s %v", refused, err)
	}
	for _, ag := range []string{"procurement", "treasury"} {
		if _, err := acme.A2ABoundary(ctx, domain.A2ABoundaryChange{Op: domain.A2AOpTrust, Agent: ag}); err != nil {
			t.Fatal(err)
		}
	}
	answer, err := acme.A2AProxy(ctx, "treasury", send(2, "hello"))
	if err != nil || !bytes.Contains(answer, []byte("echo: hello")) {
		t.Fatalf("A2AProxy once trusted: %s %v", answer, err)
	}
	if _, err := acme.GetA2AAgentCard(ctx, "nobody", false); err == nil {
		t.Fatal("the card of an agent the gate does not front")
	}
}

// TestHTTPClientExecute: an agent prepares and executes a request at a
// real business through the gate (the Agent Policy Engine spec §2.2): the
// business's outcome as the typed reply; a consumer policy's refusal as
// an *APIError with its code.
func TestHTTPClientExecute(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"completed","data":{"order_id":%q}}`, r.Header.Get("Idempotency-Key"))
	}))
	t.Cleanup(shop.Close)
	g := startGate(t, nil)
	home := g.principal(t, "org_home")
	if _, err := home.CreateBusiness(ctx, client.BusinessRequest{ID: "coffee", Name: "Coffee", Categories: []string{"food"},
		Endpoint: shop.URL + "/orders", Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	a, _, err := home.RegisterAgentClient(ctx, client.RegisterRequest{Agent: domain.AgentInfo{Name: "Shopper", Type: "autonomous", PrincipalID: "org_home"}})
	if err != nil {
		t.Fatal(err)
	}
	order := map[string]any{"item": "latte", "amount_cents": 450}
	prep, err := a.PrepareExecute(ctx, "coffee", order)
	if err != nil || !strings.HasPrefix(string(prep.ConfirmationToken), "qwed_") || prep.ExpiresAt.IsZero() {
		t.Fatalf("PrepareExecute: %+v %v", prep, err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v", prep, prep), string(prep.ConfirmationToken)) {
		t.Fatal("the confirmation token is printed")
	}
	done, err := a.Execute(ctx, "coffee", order, string(prep.ConfirmationToken))
	if err != nil || done.Status != "completed" || done.TransactionID == "" || !bytes.Contains(done.Data, []byte("order_id")) || calls.Load() != 1 {
		t.Fatalf("Execute: %+v %v (business calls %d)", done, err, calls.Load())
	}
	if _, err := home.CreatePolicy(ctx, "", policy.Policy{ID: "cap", Type: "spending", Spending: &policy.Spending{DailyCents: 500}}); err != nil {
		t.Fatal(err)
	}
	_, err = a.Execute(ctx, "coffee", map[string]any{"item": "cake", "amount_cents": 400}, "")
	var e *client.APIError
	if !errors.As(err, &e) || e.Status != http.StatusForbidden || !strings.HasPrefix(string(e.Code), "QWED-POLICY-") {
		t.Fatalf("an execute over the daily cap: %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("the business was called for a refused execute: %d calls", calls.Load())
	}
	if raw, err := home.ListTransactions(ctx, nil); err != nil || !bytes.Contains(raw, []byte(done.TransactionID)) {
		t.Fatalf("ListTransactions: %s %v", raw, err)
	}
	if raw, err := home.GetTransaction(ctx, done.TransactionID, nil); err != nil || !bytes.Contains(raw, []byte("completed")) {
		t.Fatalf("GetTransaction: %s %v", raw, err)
	}
}

// TestHTTPClientTLS: an https gate is called through the *http.Client
// that trusts its certificate (WithHTTPClient); without it the handshake
// fails as a *ConnectionError that names no credential.
func TestHTTPClientTLS(t *testing.T) {
	ctx := context.Background()
	g := startGateTLS(t, nil, true)
	if !strings.HasPrefix(g.URL, "https://") {
		t.Fatalf("the gate is not served over TLS: %s", g.URL)
	}
	acme := g.principal(t, "org_tls")
	agent, reg := register(t, acme, "org_tls", "tls", domain.Permissions{}, domain.Limits{})
	if d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2"}, nil); err != nil || d.Decision != domain.Approved {
		t.Fatalf("VerifyAction over TLS: %+v %v", d, err)
	}
	untrusting, err := client.NewHTTP(g.URL, client.WithAgentToken(string(reg.AgentToken)), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = untrusting.GetAgent(ctx, reg.AgentID)
	var ce *client.ConnectionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), string(reg.AgentToken)) {
		t.Fatalf("an untrusted certificate: %v", err)
	}
}
