package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// QWED-Agent spec v1.1 §5.2 no_pii_leakage over HTTP: a card number that
// is a parameter's KEY is found (QWED-SEC-003) and the locations name the
// key by its index among the object's members (parameters/~redacted~1),
// never by its text: the card is in no reply; the decision's record holds
// it once, in the request as sent (its command, as a card in a value is
// recorded), never in its error, verification or locations; the activity
// entry's error names no card either.
func TestAgentSpec_5_2_NoPIILeakageThroughParameterKeys_HTTP(t *testing.T) {
	dir := t.TempDir()
	g := newTestGate(t, gateOptions{dataDir: dir})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 3, nil)
	const card = "4111111111111111"
	before := g.head()
	r := g.do("POST", "/agents/"+a.id+"/tools/send_email", bearerH(a.token),
		`{"tool_call": {"parameters": {"to": "x", "`+card+`": "y"}}}`)
	m := r.json(t)
	if r.status != http.StatusForbidden || r.errorCode(t) != string(domain.CodePIIDetected) {
		t.Fatalf("a card as a parameter key: %d %s; want 403 QWED-SEC-003", r.status, r.body)
	}
	if strings.Contains(string(r.body), "4111") {
		t.Fatalf("the reply holds the card: %s", r.body)
	}
	e, _ := m["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if locs, _ := d["locations"].([]any); len(locs) != 1 || locs[0] != "parameters/~redacted~1" {
		t.Fatalf("locations %v; want parameters/~redacted~1", d["locations"])
	}
	evs := g.events(before)
	if len(evs) != 1 || evs[0].Decided == nil {
		t.Fatalf("log after the decision: %+v", evs)
	}
	for _, rec := range g.records(before) {
		// The command (the request as sent) is the one place the key is.
		if n := bytes.Count(rec, []byte("4111")); n != 1 {
			t.Fatalf("the decision's record holds the card %d times, want once (its command): %s", n, rec)
		}
	}
	ev := evs[0]
	ev.Command = nil
	if p, err := eventjson.Marshal(ev); err != nil || bytes.Contains(p, []byte("4111")) {
		t.Fatalf("the decision (without its command) holds the card: %s %v", p, err)
	}
	r = g.do("GET", "/agents/"+a.id+"/activity", apiKey(key), nil)
	acts, _ := r.json(t)["activities"].([]any)
	if r.status != http.StatusOK || len(acts) != 1 {
		t.Fatalf("the activity: %d %s", r.status, r.body)
	}
	act, _ := acts[0].(map[string]any)
	if s := fmt.Sprint(act["error"], act["verification"]); strings.Contains(s, "4111") || !strings.Contains(s, "~redacted~1") {
		t.Fatalf("the activity's error and verification: %s", s)
	}
}
