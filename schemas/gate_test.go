package schemas

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGateSchemas pins the accessors of the gate's schemas and what they
// accept and refuse at their edges.
func TestGateSchemas(t *testing.T) {
	for _, typ := range CommandTypes() {
		if _, ok := Command(typ); !ok {
			t.Errorf("no body schema for %s", typ)
		}
	}
	for _, typ := range ReplyTypes() {
		if _, err := ValidateReply(typ, []byte(`{"error":{"code":"QWED-INT-001","message":"m"}}`)); err != nil {
			t.Errorf("reply schema of %s: %v", typ, err)
		}
	}
	if _, ok := Command("qwed.verify"); ok {
		t.Error("qwed.verify has the QWED protocol's schemas (Request, BatchRequest), not a gate body")
	}
	if _, err := ValidateCommand("qwed.nope", []byte(`{}`)); err == nil {
		t.Error("ValidateCommand of an unknown type: want an error")
	}
	if _, err := ValidateCommand("qwed.agent.register", []byte(`{} x`)); err == nil {
		t.Error("ValidateCommand of trailing data: want an error")
	}
	cmds := []struct {
		typ, body string
		keyword   string // "" means valid
		at        string
	}{
		{"qwed.agent.action.verify", `{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c","step_number":1}}`, "", ""},
		{"qwed.agent.action.verify", `{"action":{"type":null},"context":{"step_number":"3"},"options":null}`, "", ""},
		{"qwed.agent.action.verify", `{"action":{"type":7}}`, "type", "/action/type"},
		{"qwed.agent.action.verify", `{"action":{"TYPE":"x"}}`, "additionalProperties", "/action"},
		{"qwed.agent.register", `{"agent":{"name":"a"},"budget":{"cost":{"max_daily_usd":"5"},"max_requests_per_hour":10},"trust_level":"trusted"}`, "", ""},
		{"qwed.agent.register", `{"budget":{"cost":{"max_hourly_usd":1}}}`, "additionalProperties", "/budget/cost"},
		{"qwed.agent.register", `{"trust_level":4}`, "maximum", "/trust_level"},
		{"qwed.agent.token.revoke", `{}`, "", ""},
		{"qwed.agent.token.revoke", `{"reason":"r"}`, "additionalProperties", ""},
		{"qwed.approval.resolve", `{"approval_id":"a","approve":true}`, "", ""},
		{"qwed.approval.resolve", `[]`, "type", ""},
	}
	for _, c := range cmds {
		vs, err := ValidateCommand(c.typ, []byte(c.body))
		if err != nil {
			t.Fatalf("%s %s: %v", c.typ, c.body, err)
		}
		if c.keyword == "" {
			if vs != nil {
				t.Errorf("%s %s: want valid, got %+v", c.typ, c.body, vs)
			}
			continue
		}
		if len(vs) == 0 || vs[0].Keyword != c.keyword || vs[0].InstanceLocation != c.at {
			t.Errorf("%s %s: want %s at %q, got %+v", c.typ, c.body, c.keyword, c.at, vs)
		}
	}
	ev := `{"seq":1,"prev":"","partition":0,"time":"2026-03-02T10:00:00Z","type":"gate.configured","command":{"type":"qwed.gate.configure","request":{"source":"gate","id":"x"},"configure":{"config":{"approval_ttl":"24h0m0s","doom_loop_guard_required":false,"max_steps":50}}},"configured":{"approval_ttl":"24h0m0s","doom_loop_guard_required":false,"max_steps":50}}`
	if vs, err := Event().ValidateJSON([]byte(ev)); err != nil || vs != nil {
		t.Fatalf("event: %v %+v", err, vs)
	}
	if vs, _ := Event().ValidateJSON([]byte(`{"seq":1,"prev":"","partition":0,"time":"t","type":"agent.renamed"}`)); len(vs) == 0 || vs[0].InstanceLocation != "/type" {
		t.Fatalf("an unknown event type: got %+v", vs)
	}
	if vs, _ := Event().ValidateJSON([]byte(`{"seq":2,"prev":"ab","partition":0,"time":"t","type":"action.decided","agent_id":"a"}`)); len(vs) == 0 || vs[0].Keyword != "required" || !slices.Equal(vs[0].Missing, []string{"decided"}) {
		t.Fatalf("an action.decided event without its payload: got %+v", vs)
	}
	if vs, _ := ValidateReply("qwed.agent.suspend", []byte(`{"agent_id":"a","status":"suspended"}`)); len(vs) == 0 || vs[0].Keyword != "required" {
		t.Fatalf("a status reply without reason: got %+v", vs)
	}
}

// TestKeywords pins the assertion keywords a schema reports: references
// followed, annotations left out, opaque definitions not entered.
func TestKeywords(t *testing.T) {
	s, _ := Command("qwed.agent.register")
	got := s.Keywords()
	for _, k := range []string{"$ref", "additionalProperties", "anyOf", "items", "maximum", "minimum", "properties", "type"} {
		if !slices.Contains(got, k) {
			t.Errorf("Keywords() = %v: want %s", got, k)
		}
	}
	if slices.Contains(got, "description") || slices.Contains(got, "title") {
		t.Errorf("Keywords() = %v: annotations are not assertions", got)
	}
	got = s.Keywords("TrustLevel", "USD", "Limits")
	if slices.Contains(got, "maximum") || !slices.Contains(got, "$ref") {
		t.Errorf("Keywords(TrustLevel, USD, Limits) = %v: want $ref and no maximum", got)
	}
	if !slices.IsSorted(got) {
		t.Errorf("Keywords() = %v: not sorted", got)
	}
}

// TestEventFixtures validates every frozen event of the log's v1 format
// (testdata/events/v1, the codec's fixtures) against the event schema.
func TestEventFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "events", "v1", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no event fixtures in testdata/events/v1 (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if vs, err := Event().ValidateJSON(b); err != nil || vs != nil {
			t.Errorf("%s does not match the event schema: %v %+v", filepath.Base(f), err, vs)
		}
	}
}
