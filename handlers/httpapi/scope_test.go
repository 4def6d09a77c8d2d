package httpapi

import (
	"net/http"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/streams/cehttp"
)

// Issue 11 item 13: an Idempotency-Key is scoped by the credential it was
// sent with. Principal Q sending P's key first neither blocks P (no 409)
// nor reads P's answer; a made-up token sending an agent's key first does
// not block the agent; a retry with the same credential still gets the
// recorded answer.
func TestIssue11_IdempotencyKeysArePerPrincipal(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	kp, kq := g.issueKey("org_p"), g.issueKey("org_q")
	register := func(key, principal string) response {
		return g.do("POST", "/agents/register", hdr{"X-API-Key": key, "Idempotency-Key": "K"}, map[string]any{
			"agent": map[string]any{"name": "bot", "type": "autonomous", "principal_id": principal}, "permissions": map[string]any{}})
	}
	rq := register(kq, "org_q")
	rp := register(kp, "org_p")
	if rq.status != http.StatusCreated || rp.status != http.StatusCreated {
		t.Fatalf("the same Idempotency-Key by two principals: Q %d %s, P %d %s", rq.status, rq.body, rp.status, rp.body)
	}
	p, q := rp.json(t), rq.json(t)
	if p["agent_id"] == q["agent_id"] || p["principal_id"] != "org_p" {
		t.Fatalf("P's registration answered with %v (Q's was %v)", p, q)
	}
	again := register(kp, "org_p")
	if again.status != http.StatusCreated || again.json(t)["agent_id"] != p["agent_id"] {
		t.Fatalf("P's retry: %d %s, want its recorded registration", again.status, again.body)
	}

	agentID, token := p["agent_id"].(string), p["agent_token"].(string)
	path := "/agents/" + agentID + "/verify"
	body := verifyReq("calculate", "1+1", "c", 1)
	if r := g.do("POST", path, hdr{"Authorization": "Bearer made-up", "Idempotency-Key": "K2"}, body); r.status != http.StatusUnauthorized {
		t.Fatalf("a made-up token: %d %s", r.status, r.body)
	}
	if r := g.do("POST", path, hdr{"X-API-Key": kq, "Idempotency-Key": "K2"}, body); r.status != http.StatusForbidden {
		t.Fatalf("another principal's key: %d %s", r.status, r.body)
	}
	r := g.do("POST", path, hdr{"Authorization": "Bearer " + token, "Idempotency-Key": "K2"}, body)
	if r.status != http.StatusOK || r.json(t)["decision"] != "APPROVED" {
		t.Fatalf("the agent's request after others used its Idempotency-Key: %d %s", r.status, r.body)
	}
	evs := g.events(0)
	last := evs[len(evs)-1].Command.Request
	if last.Source != "http" || last.ID != "K2" || last.Scope != domain.RequestScope("", command.HashSecret(token)) {
		t.Fatalf("recorded request %+v, want source http, id K2, scoped by the agent's token", last)
	}
}

// Issue 11 item 13: POST /events refuses CloudEvents whose source is in the
// HTTP API's namespace ("http", "http/…"), with which they could claim the
// request ids of HTTP requests; a URI source such as http://… is accepted.
func TestIssue11_EventsRefuseTheHTTPSourceNamespace(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	reg := `{"agent":{"name":"bot","type":"supervised","principal_id":"org_a"}}`
	for _, src := range []string{"http", "http/p"} {
		ev := cloudEvent(cehttp.ModeBinary, "qwed.agent.register", "reg-1", "", reg)
		ev.Source = src
		before := g.head()
		status, _, data := g.sendEvent(ev, apiKey(key))
		e, _ := data["error"].(map[string]any)
		if status != http.StatusBadRequest || e["code"] != string(domain.CodeInvalidRequest) {
			t.Fatalf("source %q: %d %v, want 400 QWED-REQ-001", src, status, data)
		}
		if d, _ := e["details"].(map[string]any); d["attribute"] != "source" {
			t.Fatalf("source %q: details %v, want attribute source", src, e["details"])
		}
		g.expectRejected(before, domain.CodeInvalidRequest, "")
	}
	ev := cloudEvent(cehttp.ModeBinary, "qwed.agent.register", "reg-1", "", reg)
	ev.Source = "http://agents.example.com/bot"
	if status, _, data := g.sendEvent(ev, apiKey(key)); status != http.StatusCreated {
		t.Fatalf("a URI source: %d %v", status, data)
	}
}
