package kafkagate_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// QWED-Agent spec v1.1 §2.2 on Kafka (issue 16 items 2 and 3): a
// principal's path and egress policy is principal-wide state. PUT
// /principals/{id}/permissions is decided on partition 0 and answered
// once every partition has copied it: the next request of the
// principal's agent on partition 1 is decided under it. Another
// principal's key is refused.
func TestAgentSpec_2_2_PrincipalPermissions_Kafka(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg })
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second)
	c := newClient(t, brokers)
	key, other := issueKeyOver(t, h, "org_k"), issueKeyOver(t, h, "org_o")
	ids, tokens := registerOn(t, c, 1, 1, "org_k")
	id, bearer := ids[0], map[string]string{"Authorization": "Bearer " + tokens[0]}

	trust := func() {
		if st, b := h.do(t, "POST", "/agents/"+id+"/trust-level", map[string]string{"X-API-Key": key}, `{"trust_level":3}`); st != 200 {
			t.Fatalf("trust level: %d %v", st, b)
		}
	}
	trust()
	body := `{"allowed_paths":["/srv"],"allowed_hosts":["Bücher.example"]}`
	if st, b := h.do(t, "PUT", "/principals/org_k/permissions", map[string]string{"X-API-Key": other}, body); st != http.StatusForbidden {
		t.Fatalf("another principal's key: %d %v", st, b)
	}
	st, b := h.do(t, "PUT", "/principals/org_k/permissions", map[string]string{"X-API-Key": key}, body)
	if hosts, _ := b["allowed_hosts"].([]any); st != 200 || len(hosts) != 1 || hosts[0] != "xn--bcher-kva.example" {
		t.Fatalf("setting: %d %v", st, b)
	}
	for i, c := range []struct {
		act      string
		decision string
		rule     string
	}{
		{`{"type":"read_file","target":"/tmp/x"}`, "DENIED", "outside_allowed_roots"},
		{`{"type":"read_file","target":"/srv/x"}`, "APPROVED", ""},
		{`{"type":"network_request","target":"https://BÜCHER.example/"}`, "APPROVED", ""},
	} {
		st, m := h.do(t, "POST", "/agents/"+id+"/verify", bearer,
			`{"action":`+c.act+`,"context":{"conversation_id":"k","step_number":`+string(rune('1'+i))+`}}`)
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if m["decision"] != c.decision || (c.rule != "" && d["rule"] != c.rule) {
			t.Errorf("%s: %d %v; want %s %s", c.act, st, m, c.decision, c.rule)
		}
		trust() // a denial demotes the agent
	}
	// Partition 1 decided under its copy of partition 0's event.
	var copied bool
	for _, ev := range partitionEvents(t, lg, 1) {
		if ev.Type == domain.EvPrincipalPermissionsSet {
			t.Fatalf("partition 1 decided the policy itself (seq %d)", ev.Seq)
		}
		if ev.Type == domain.EvPrincipalStateCopied {
			for _, ch := range ev.Command.Copy.Changes {
				copied = copied || (ch.Type == domain.EvPrincipalPermissionsSet && ch.PrincipalPermissions.PrincipalID == "org_k")
			}
		}
	}
	if !copied {
		t.Fatal("partition 1 holds no copy of the policy")
	}
}
