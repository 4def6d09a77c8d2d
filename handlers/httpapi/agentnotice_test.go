package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/notify"
)

// hookReceiver is a webhook endpoint on a real socket that keeps every
// POST and answers 200.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	posts []hookPost
}

type hookPost struct {
	body   []byte
	header http.Header
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.posts = append(rc.posts, hookPost{body: b, header: r.Header.Clone()})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) received() []hookPost {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookPost(nil), rc.posts...)
}

// TestAgentSpec_2_3_NotifyPrincipalOfBlockedDecisions pins QWED-Agent
// spec v1.1 §2.3 (FAILED, any risk: "Block and notify principal") over
// HTTP in the embedded deployment, with a webhook runner as serve runs
// it: an action DENIED by the path policy and a tool call refused by its
// parameters' verification are each POSTed, signed (verified with the
// gate's JWKS fetched over HTTP), to the principal's webhook that names
// agent_blocked, with no parameter, query or target in the body; an
// approved action, a budget refusal (BUDGET_EXCEEDED, a 429) and a
// malformed request notify nobody; the principal's webhook without an
// events filter and another principal's agent_blocked webhook receive
// nothing; GET /webhooks/deliveries lists the deliveries by kind, to
// their principal only.
func TestAgentSpec_2_3_NotifyPrincipalOfBlockedDecisions(t *testing.T) {
	g := newTestGate(t, gateOptions{webhooks: true})
	key, other := g.issueKey("org_a"), g.issueKey("org_b")
	wanted, unfiltered, others := newHookReceiver(t), newHookReceiver(t), newHookReceiver(t)
	hook := func(k, url, events string) string {
		r := g.do("POST", "/webhooks", apiKey(k), `{"url":"`+url+`"`+events+`}`)
		if r.status != http.StatusCreated {
			t.Fatalf("creating a webhook: %d %s", r.status, r.body)
		}
		return webhookOf(t, r).ID
	}
	blockedHook := hook(key, wanted.URL+"/agentgate", `,"events":["agent_blocked"]`)
	hook(key, unfiltered.URL+"/all", "")
	hook(other, others.URL+"/b", `,"events":["agent_blocked","blocked"]`)

	r := g.do("POST", "/agents/register", apiKey(key), map[string]any{
		"agent":       map[string]any{"name": "files", "type": "autonomous", "principal_id": "org_a"},
		"permissions": map[string]any{"allowed_paths": []string{"/srv/data"}, "allowed_tools": []string{"database_read"}},
		"budget":      map[string]any{"max_per_request_cost_usd": 1},
		"trust_level": 3,
	})
	if r.status != http.StatusCreated {
		t.Fatalf("registering: %d %s", r.status, r.body)
	}
	id, tok := r.json(t)["agent_id"].(string), r.json(t)["agent_token"].(string)
	const secret = "sk-live-4f9d2c7e1b"
	verify := func(action map[string]any, step int, wantStatus int) response {
		t.Helper()
		r := g.do("POST", "/agents/"+id+"/verify", bearerH(tok),
			map[string]any{"action": action, "context": map[string]any{"conversation_id": "c1", "step_number": step}})
		if r.status != wantStatus {
			t.Fatalf("verify %v: %d %s, want %d", action, r.status, r.body, wantStatus)
		}
		return r
	}
	denied := verify(map[string]any{"type": "read_file", "target": "/etc/shadow", "parameters": map[string]any{"token": secret}}, 1, http.StatusForbidden)
	deniedID, _ := denied.json(t)["action_id"].(string)
	verify(map[string]any{"type": "read_file", "target": "/srv/data/q1.csv"}, 2, http.StatusOK)
	verify(map[string]any{"type": "read_file", "target": "/srv/data/q2.csv", "estimated_cost_usd": 5}, 3, http.StatusTooManyRequests)
	if r := g.do("POST", "/agents/"+id+"/verify", bearerH(tok), `{"action":`); r.status != http.StatusBadRequest {
		t.Fatalf("a malformed request: %d %s", r.status, r.body)
	}
	tool := g.do("POST", "/agents/"+id+"/tools/database_read", bearerH(tok), `{"tool_call": {"parameters": {"query": "DROP TABLE users"}}}`)
	if tool.json(t)["approved"] != false || tool.errorCode(t) != string(domain.CodeVerificationFailed) {
		t.Fatalf("DROP TABLE through database_read: %d %s", tool.status, tool.body)
	}

	deadline := time.Now().Add(20 * time.Second)
	for len(wanted.received()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook received %d POSTs, want 2", len(wanted.received()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	jwks := g.do("GET", "/.well-known/jwks.json", nil, nil)
	set, err := attest.ParseJWKS(jwks.body)
	if err != nil {
		t.Fatalf("the gate's JWKS %s: %v", jwks.body, err)
	}
	var bodies []notify.Body
	for _, p := range wanted.received() {
		if err := set.VerifyWebhook(p.header.Get(notify.SignatureHeader), p.body); err != nil {
			t.Fatalf("signature of %s: %v", p.body, err)
		}
		if tampered := strings.Replace(string(p.body), `"agent_blocked"`, `"agent_blockeD"`, 1); set.VerifyWebhook(p.header.Get(notify.SignatureHeader), []byte(tampered)) == nil {
			t.Fatalf("a tampered body verifies: %s", tampered)
		}
		for _, leak := range []string{secret, "/etc/shadow", "DROP TABLE", "query"} {
			if strings.Contains(string(p.body), leak) {
				t.Fatalf("the notice carries %q: %s", leak, p.body)
			}
		}
		var b notify.Body
		dec := json.NewDecoder(strings.NewReader(string(p.body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			t.Fatal(err)
		}
		if p.header.Get(notify.EventHeader) != domain.NoticeAgentBlocked || b.Kind != domain.NoticeAgentBlocked ||
			b.Consumer != "org_a" || b.WebhookID != blockedHook || b.Transaction != nil || b.Decision == nil ||
			b.Decision.AgentID != id || b.Decision.Principal != "org_a" || b.Decision.Decision != domain.Denied {
			t.Fatalf("body %s", p.body)
		}
		bodies = append(bodies, b)
	}
	action, call := bodies[0].Decision, bodies[1].Decision
	if action.Kind != domain.KindAction || action.ActionID != deniedID || action.ActionType != "read_file" ||
		action.Code != domain.CodeSecurityViolated || action.Status != "BLOCKED" || action.Check == "" ||
		bodies[0].Message != domain.CodeSecurityViolated.Description() || bodies[0].Event.Seq != action.Seq {
		t.Errorf("the denied action's notice %+v (message %q)", action, bodies[0].Message)
	}
	if call.Kind != domain.KindTool || call.Tool != "database_read" || call.Code != domain.CodeVerificationFailed {
		t.Errorf("the refused tool call's notice %+v", call)
	}
	for _, ev := range g.events(0) {
		if n, ok := domain.AgentNoticeOf(ev); ok && n.Seq != action.Seq && n.Seq != call.Seq {
			t.Errorf("a notice of event %d (%s, %s)", ev.Seq, ev.Type, n.Decision)
		}
	}

	list := g.do("GET", "/webhooks/deliveries?kind=agent_blocked", apiKey(key), nil)
	var page struct{ Deliveries []map[string]any }
	if err := json.Unmarshal(list.body, &page); err != nil || list.status != 200 || len(page.Deliveries) != 2 {
		t.Fatalf("org_a's agent_blocked deliveries: %d %s", list.status, list.body)
	}
	for _, d := range page.Deliveries {
		if d["kind"] != domain.NoticeAgentBlocked || d["webhook_id"] != blockedHook {
			t.Errorf("delivery %v", d)
		}
	}
	for _, k := range []string{other} {
		if r := g.do("GET", "/webhooks/deliveries", apiKey(k), nil); r.status != 200 || strings.Contains(string(r.body), "dl_") {
			t.Errorf("org_b's deliveries: %d %s", r.status, r.body)
		}
	}
	if r := g.do("GET", "/webhooks/deliveries", apiKey(key), nil); strings.Count(string(r.body), `"delivery_id"`) != 2 {
		t.Errorf("org_a's deliveries (the unfiltered webhook has none): %s", r.body)
	}
	if n, m := len(unfiltered.received()), len(others.received()); n != 0 || m != 0 {
		t.Errorf("the unfiltered webhook received %d POSTs, org_b's %d; want none", n, m)
	}
}
