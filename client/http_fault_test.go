package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// attemptLog records the attempts a front handler saw.
type attemptLog struct {
	mu   sync.Mutex
	keys []string // the Idempotency-Key of each attempt
	at   []time.Time
}

func (l *attemptLog) add(r *http.Request) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	l.at = append(l.at, time.Now())
	return len(l.keys)
}

func (l *attemptLog) snapshot() ([]string, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...), append([]time.Time(nil), l.at...)
}

// faultGate is a real gate behind a front handler that, for the requests
// matching match, calls fault with the attempt's number: fault answers
// the attempt itself (true) or lets the gate answer it (false).
func faultGate(t *testing.T, match func(*http.Request) bool, fault func(n int, w http.ResponseWriter, r *http.Request, gate http.Handler) bool) (*testGate, *attemptLog) {
	t.Helper()
	log := &attemptLog{}
	g := startGate(t, func(gate http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if match(r) {
				if n := log.add(r); fault(n, w, r, gate) {
					return
				}
			}
			gate.ServeHTTP(w, r)
		})
	})
	return g, log
}

func isVerify(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/verify") && strings.HasPrefix(r.URL.Path, "/agents/")
}

func refusal(w http.ResponseWriter, status int, code, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%q,"message":"injected","details":{}}}`, code)
}

// TestHTTPClientRetryLostAnswer: the gate decides the first attempt but
// its answer is lost (a 502 reaches the client); the retry carries the
// same Idempotency-Key and gets the recorded decision: one action, not
// two.
func TestHTTPClientRetryLostAnswer(t *testing.T) {
	ctx := context.Background()
	var lost string // the body of the decided, lost answer
	g, log := faultGate(t, isVerify, func(n int, w http.ResponseWriter, r *http.Request, gate http.Handler) bool {
		if n != 1 {
			return false
		}
		rec := httptest.NewRecorder()
		gate.ServeHTTP(rec, r)
		lost = rec.Body.String()
		refusal(w, http.StatusBadGateway, "QWED-SYS-002", "")
		return true
	})
	agent, reg := register(t, g.principal(t, "org_acme"), "org_acme", "retry", domain.Permissions{}, domain.Limits{})
	d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2"}, nil)
	if err != nil || d.Decision != domain.Approved {
		t.Fatalf("VerifyAction: %+v %v", d, err)
	}
	keys, _ := log.snapshot()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("attempts' Idempotency-Keys %q: want two equal non-empty keys", keys)
	}
	if !strings.Contains(lost, d.ActionID) {
		t.Fatalf("the retry's action %s is not the one decided first: %s", d.ActionID, lost)
	}
	v, err := agent.Get(ctx)
	if err != nil || v.TotalActions != 1 || v.AgentID != reg.AgentID {
		t.Fatalf("after a retried verify: %+v %v, want 1 action", v, err)
	}
	// A second logical call draws a new key.
	if _, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "3+3"}, nil); err != nil {
		t.Fatal(err)
	}
	if keys, _ := log.snapshot(); len(keys) != 3 || keys[2] == keys[0] {
		t.Fatalf("the next call's key %q repeats the first call's", keys)
	}
}

// TestHTTPClientRetryAfter: a 429 refusal with Retry-After: 1 is retried
// after at least a second; a 503 without it after the backoff; a refusal
// that is not transient (400), and a BUDGET_EXCEEDED decision (429), are
// answered at once; retries end at the client's maximum with the last
// refusal.
func TestHTTPClientRetryAfter(t *testing.T) {
	ctx := context.Background()
	mode := "429"
	var mu sync.Mutex
	g, log := faultGate(t, isVerify, func(n int, w http.ResponseWriter, _ *http.Request, _ http.Handler) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case mode == "429" && n == 1:
			refusal(w, http.StatusTooManyRequests, "QWED-AUTH-004", "1")
			return true
		case mode == "503":
			refusal(w, http.StatusServiceUnavailable, "QWED-SYS-002", "")
			return true
		}
		return false
	})
	agent, _ := register(t, g.principal(t, "org_acme"), "org_acme", "ra", domain.Permissions{}, domain.Limits{MaxDailyCost: usd(t, "1")})
	if d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2"}, nil); err != nil || d.Decision != domain.Approved {
		t.Fatalf("VerifyAction after a 429: %+v %v", d, err)
	}
	keys, at := log.snapshot()
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("attempts %q: want two with one key", keys)
	}
	if wait := at[1].Sub(at[0]); wait < time.Second {
		t.Fatalf("the retry came %v after a Retry-After: 1", wait)
	}

	// BUDGET_EXCEEDED is a 429 decision: one attempt.
	d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "4+4", EstimatedCost: usd(t, "5")}, nil)
	if err != nil || d.Decision != domain.BudgetExceeded {
		t.Fatalf("over budget: %+v %v", d, err)
	}
	if keys, _ := log.snapshot(); len(keys) != 3 {
		t.Fatalf("a BUDGET_EXCEEDED decision was retried: %d attempts", len(keys)-2)
	}
	// A malformed request (400) is not retried.
	_, err = agent.VerifyRequest(ctx, domain.VerifyAction{Action: domain.Action{Type: ""}})
	if !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("an empty action: %v, want a 400 refusal", err)
	}
	if keys, _ := log.snapshot(); len(keys) != 4 {
		t.Fatalf("a 400 was retried: %d attempts", len(keys)-3)
	}

	// Always 503: 1 + max retries attempts, then the refusal.
	mu.Lock()
	mode = "503"
	mu.Unlock()
	one := g.client(t, client.WithMaxRetries(1)).Agent(agent.ID(), agent.Token())
	_, err = one.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "5+5"}, nil)
	e := wantCode(t, "a gate that stays unavailable", err, 503, domain.CodeUnavailable)
	if !errors.Is(err, client.ErrServer) || e.RequestID == "" {
		t.Fatalf("503 refusal: %+v", e)
	}
	if keys, _ := log.snapshot(); len(keys) != 6 || keys[4] != keys[5] || keys[4] != e.RequestID {
		t.Fatalf("attempts after WithMaxRetries(1): %q, want two more with the key %s", keys, e.RequestID)
	}
}

// TestHTTPClientIdempotencyKey: the caller's key is sent as given; the
// same write with it again gets the recorded answer (same action); the
// key with another request is QWED-REQ-409.
func TestHTTPClientIdempotencyKey(t *testing.T) {
	g, log := faultGate(t, isVerify, func(int, http.ResponseWriter, *http.Request, http.Handler) bool { return false })
	agent, _ := register(t, g.principal(t, "org_acme"), "org_acme", "idem", domain.Permissions{}, domain.Limits{})
	ctx := client.WithIdempotencyKey(context.Background(), "order-42")
	actx := &domain.ActionContext{ConversationID: "conv_idem", StepNumber: "1"}
	d1, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2"}, actx)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "2+2"}, actx)
	if err != nil || d2.ActionID != d1.ActionID {
		t.Fatalf("the same write with the same key: %+v %v, want action %s again", d2, err, d1.ActionID)
	}
	_, err = agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "9+9"}, actx)
	wantCode(t, "the key with another request", err, 409, domain.CodeConflict)
	if !errors.Is(err, client.ErrConflict) {
		t.Fatalf("ErrConflict does not match %v", err)
	}
	if keys, _ := log.snapshot(); len(keys) != 3 || keys[0] != "order-42" || keys[2] != "order-42" {
		t.Fatalf("keys sent: %q", keys)
	}
}

// TestHTTPClientContext: the context bounds the call (a hung gate, a long
// Retry-After); WithTimeout bounds each attempt.
func TestHTTPClientContext(t *testing.T) {
	seen := make(chan struct{}, 8)
	g, _ := faultGate(t, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/budget") },
		func(n int, w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
			seen <- struct{}{}
			if strings.Contains(r.URL.Path, "agent_retry") {
				refusal(w, http.StatusServiceUnavailable, "QWED-SYS-002", "20")
				return true
			}
			<-r.Context().Done() // hung until the client gives up
			return true
		})
	c := g.client(t, client.WithAPIKey(adminKey))

	// A deadline ends the call while the gate hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.GetAgentBudget(ctx, "agent_hung")
	var ce *client.ConnectionError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || ce.Route != "GET /agents/{id}/budget" {
		t.Fatalf("a hung gate under a deadline: %v", err)
	}
	<-seen

	// Cancelling during a Retry-After wait ends the call at once.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.GetAgentBudget(ctx2, "agent_retry"); done <- err }()
	<-seen
	cancel2()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled during a Retry-After: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call outlived its cancelled context by 10 s (it waited for Retry-After: 20)")
	}

	// A deadline shorter than the Retry-After: the refusal, without waiting.
	ctx3, cancel3 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel3()
	start := time.Now()
	_, err = c.GetAgentBudget(ctx3, "agent_retry")
	wantCode(t, "Retry-After past the deadline", err, 503, domain.CodeUnavailable)
	if time.Since(start) > 4*time.Second {
		t.Fatalf("the client waited %v for a Retry-After past its deadline", time.Since(start))
	}
	<-seen

	// WithTimeout bounds one attempt.
	short := g.client(t, client.WithAPIKey(adminKey), client.WithTimeout(200*time.Millisecond), client.WithMaxRetries(0))
	_, err = short.GetAgentBudget(context.Background(), "agent_hung")
	if !errors.Is(err, client.ErrAttemptTimeout) {
		t.Fatalf("an attempt past WithTimeout: %v", err)
	}
}

// TestHTTPClientTenantIsolation: one tenant's credentials never read or
// act on another's agents and approvals.
func TestHTTPClientTenantIsolation(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	acme, globex := g.principal(t, "org_acme"), g.principal(t, "org_globex")
	a, regA := register(t, acme, "org_acme", "a", domain.Permissions{}, domain.Limits{})
	b, regB := register(t, globex, "org_globex", "b", domain.Permissions{}, domain.Limits{})
	pending, err := b.VerifyToolCall(ctx, "send_email", map[string]string{"to": "x@example.com"})
	if err != nil || pending.Approval == nil {
		t.Fatalf("b's tool call: %+v %v", pending, err)
	}

	// Agent A's token on agent B: 401 QWED-AGENT-002, for reads and writes.
	asA := acme.Agent(regB.AgentID, a.Token())
	_, err = asA.Get(ctx)
	wantCode(t, "A's token reading B", err, 401, domain.CodeInvalidAgentToken)
	_, err = asA.Budget(ctx)
	wantCode(t, "A's token reading B's budget", err, 401, domain.CodeInvalidAgentToken)
	_, err = asA.Activity(ctx, client.ActivityQuery{})
	wantCode(t, "A's token reading B's activity", err, 401, domain.CodeInvalidAgentToken)
	_, err = asA.VerifyAction(ctx, domain.Action{Type: "calculate", Query: "1+1"}, nil)
	if !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("A's token verifying as B: %v", err)
	}
	_, err = a.Approval(ctx, pending.Approval.ID)
	wantCode(t, "A's token reading B's approval", err, 401, domain.CodeInvalidAgentToken)

	// Principal acme's key on globex's agent and approval: 403.
	_, err = acme.GetAgent(ctx, regB.AgentID)
	wantCode(t, "acme reading globex's agent", err, 403, domain.CodeForbidden)
	_, err = acme.Approve(ctx, pending.Approval.ID, "not mine")
	if err == nil || !(errors.Is(err, client.ErrForbidden) || errors.Is(err, client.ErrNotFound)) {
		t.Fatalf("acme approving globex's approval: %v", err)
	}
	if ap, err := globex.GetApproval(ctx, pending.Approval.ID); err != nil || ap.Status != domain.ApprovalPending {
		t.Fatalf("globex's approval after acme's attempt: %+v %v", ap, err)
	}
	if page, err := acme.ListApprovals(ctx, client.ApprovalsQuery{}); err != nil || len(page.Approvals) != 0 {
		t.Fatalf("acme lists globex's approvals: %+v %v", page, err)
	}
	_, err = acme.SuspendAgent(ctx, regB.AgentID, true, "not mine")
	if !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("acme suspending globex's agent: %v", err)
	}
	// Its own principal denies it.
	if res, err := globex.Deny(ctx, pending.Approval.ID, "no"); err != nil || res.Approval.Status != domain.ApprovalDenied {
		t.Fatalf("Deny: %+v %v", res, err)
	}
	// Each reads its own.
	if v, err := a.Get(ctx); err != nil || v.AgentID != regA.AgentID {
		t.Fatalf("A reading itself: %+v %v", v, err)
	}
}

// TestHTTPClientErrorsCarryNoSecrets: refusals and connection failures
// name the code and the route, never the key or the token; results and
// clients print redacted.
func TestHTTPClientErrorsCarryNoSecrets(t *testing.T) {
	t.Setenv(client.APIKeyEnv, "")
	ctx := context.Background()
	g := startGate(t, nil)
	acme := g.principal(t, "org_acme")
	agent, reg := register(t, acme, "org_acme", "s", domain.Permissions{}, domain.Limits{})
	token := string(reg.AgentToken)
	const badKey = "qwed_key_this_is_not_a_valid_key_0123456789"

	_, err := g.client(t, client.WithAPIKey(badKey)).GetAgent(ctx, reg.AgentID)
	wantCode(t, "an unknown key", err, 401, domain.CodeInvalidAPIKey)
	_, err = g.client(t).GetAgent(ctx, reg.AgentID)
	wantCode(t, "no credentials", err, 401, domain.CodeMissingAPIKey)
	_, err = g.client(t).GetAgent(ctx, "agent_nobody")
	if err == nil {
		t.Fatal("an anonymous read of an unknown agent succeeded")
	}
	_, err = acme.GetAgent(ctx, "agent_nobody")
	wantCode(t, "an unknown agent", err, 404, domain.CodeAgentNotRegistered)
	if !errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrForbidden) {
		t.Fatalf("sentinels on a 404: %v", err)
	}
	var kafkaErr *client.Error
	if !errors.As(err, &kafkaErr) || kafkaErr.Code != domain.CodeAgentNotRegistered {
		t.Fatalf("errors.As *client.Error: %+v", kafkaErr)
	}

	// An unreachable gate.
	dead, err := client.NewHTTP("http://127.0.0.1:1", client.WithAPIKey(badKey), client.WithAgentToken(token), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, connErr := dead.GetAgent(ctx, reg.AgentID)
	var ce *client.ConnectionError
	if !errors.As(connErr, &ce) {
		t.Fatalf("an unreachable gate: %v", connErr)
	}

	printed := fmt.Sprintf("%v|%+v|%#v|%v|%+v|%#v|%v|%v|%v", reg, reg, reg, agent, acme, dead, err, connErr, reg.AgentToken)
	for _, secret := range []string{token, badKey, adminKey} {
		if strings.Contains(printed, secret) {
			t.Fatalf("a secret is printed: %s", printed)
		}
	}
	if !strings.Contains(printed, reg.AgentID) || !strings.Contains(printed, "[redacted]") {
		t.Fatalf("the printed results lost their ids or the redaction: %s", printed)
	}
}

// TestNewHTTPAddress: the address is the argument, else AGENTGATE_URL,
// else http://127.0.0.1:8080; credentials in the URL are refused.
func TestNewHTTPAddress(t *testing.T) {
	t.Setenv(client.URLEnv, "")
	t.Setenv(client.APIKeyEnv, "")
	c, err := client.NewHTTP("")
	if err != nil || c.BaseURL() != client.DefaultURL || strings.Contains(c.String(), "api key set: true") {
		t.Fatalf("default: %v %v", c, err)
	}
	t.Setenv(client.APIKeyEnv, "qwed_key_from_env")
	if c, _ = client.NewHTTP(""); !strings.Contains(c.String(), "api key set: true") {
		t.Fatalf("%s is not read: %v", client.APIKeyEnv, c)
	}
	if c, _ = client.NewHTTP("", client.WithAgentToken("qwed_agent_x")); strings.Contains(c.String(), "api key set: true") {
		t.Fatalf("%s is read beside an agent token: %v", client.APIKeyEnv, c)
	}
	t.Setenv(client.URLEnv, "https://gate.example.com/prefix/")
	if c, err = client.NewHTTP(""); err != nil || c.BaseURL() != "https://gate.example.com/prefix" {
		t.Fatalf("from %s: %v %v", client.URLEnv, c, err)
	}
	if c, err = client.NewHTTP("http://10.0.0.1:9000"); err != nil || c.BaseURL() != "http://10.0.0.1:9000" {
		t.Fatalf("argument: %v %v", c, err)
	}
	for _, bad := range []string{"ftp://x", "http://", "http://user:secretpw@host", "http://h/?q=1", "::"} {
		_, err := client.NewHTTP(bad)
		if err == nil || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("NewHTTP(%q): %v", bad, err)
		}
	}
}
