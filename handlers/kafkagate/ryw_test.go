package kafkagate_test

import (
	"fmt"
	"testing"
	"time"
)

// rywAgent registers a supervised agent of principal with key over h and
// returns its id and token.
func rywAgent(t *testing.T, h *httpOverKafka, key, principal string) (string, string) {
	t.Helper()
	st, reg := h.do(t, "POST", "/agents/register", map[string]string{"X-API-Key": key},
		`{"agent":{"name":"ryw-bot","type":"supervised","principal_id":"`+principal+`"},"permissions":{},"budget":{"max_requests_per_hour":10000}}`)
	agent, _ := reg["agent_id"].(string)
	token, _ := reg["agent_token"].(string)
	if st != 201 || agent == "" || token == "" {
		t.Fatalf("registering with a key just issued: %d %v", st, reg)
	}
	return agent, token
}

// issueAndUse issues n API keys through issuer (principals prefix_0 ..
// prefix_{n-1}), each used at once through user, and returns the last.
func issueAndUse(t *testing.T, issuer, user *httpOverKafka, prefix string, n int) string {
	t.Helper()
	var key string
	for i := range n {
		st, k := issuer.do(t, "POST", fmt.Sprintf("/principals/%s_%d/keys", prefix, i), map[string]string{"X-API-Key": adminKey}, "")
		key, _ = k["api_key"].(string)
		if st != 201 && st != 200 || key == "" {
			t.Fatalf("issuing key %d: %d %v", i, st, k)
		}
		if st, body := user.raw(t, "GET", "/approvals", map[string]string{"X-API-Key": key}); st != 200 {
			t.Fatalf("key %d used at once after it was issued: %d %s", i, st, body)
		}
	}
	return key
}

// pending asks for a medium-risk tool call (a human must approve it) and
// returns the approval id of its PENDING decision.
func pending(t *testing.T, h *httpOverKafka, agent, token string, i int) string {
	t.Helper()
	st, dec := h.do(t, "POST", "/agents/"+agent+"/tools/send_email", map[string]string{"Authorization": "Bearer " + token},
		fmt.Sprintf(`{"tool_call":{"tool_name":"send_email","parameters":{"to":"user%d@example.com"}},"justification":"ryw %d"}`, i, i))
	ap, _ := dec["approval"].(map[string]any)
	id, _ := ap["approval_id"].(string)
	if st != 202 && st != 200 || dec["decision"] != "PENDING" || id == "" {
		t.Fatalf("tool call %d: %d %v, want PENDING with an approval", i, st, dec)
	}
	return id
}

// Issue 11 item 5 "Kafka mode does not read its own writes": an HTTP
// answer in Kafka mode returns only once what it wrote is readable through
// the same instance. The read model here polls the events partitions once
// an hour, so only the write's own wait (HTTPGate: the read model applies
// the event's partition and seq first) can make it readable: 200 API keys
// each used at once, then 50 PENDING decisions each read, approved and
// read again at once, every one answered as written.
func TestKafkaHTTPReadsItsOwnWrites(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafkaPolling(t, brokers, lg, engines(t), 20*time.Second, time.Hour)

	key := issueAndUse(t, h, h, "org_ryw", 200)
	agent, token := rywAgent(t, h, key, "org_ryw_199")
	if st, body := h.raw(t, "GET", "/agents/"+agent, map[string]string{"X-API-Key": key}); st != 200 {
		t.Fatalf("the agent read at once after its registration: %d %s", st, body)
	}
	for i := range 50 {
		id := pending(t, h, agent, token, i)
		st, ap := h.do(t, "GET", "/approvals/"+id, map[string]string{"Authorization": "Bearer " + token}, "")
		if st != 200 || ap["status"] != "pending" {
			t.Fatalf("approval %d read at once after its PENDING decision: %d %v", i, st, ap)
		}
		st, res := h.do(t, "POST", "/approvals/"+id+"/approve", map[string]string{"X-API-Key": key}, `{"reason":"ok"}`)
		if r, _ := res["approval"].(map[string]any); st != 200 || r["status"] != "approved" {
			t.Fatalf("approval %d approved at once after its PENDING decision: %d %v", i, st, res)
		}
		st, ap = h.do(t, "GET", "/approvals/"+id, map[string]string{"Authorization": "Bearer " + token}, "")
		if st != 200 || ap["status"] != "approved" {
			t.Fatalf("approval %d read at once after it was approved: %d %v", i, st, ap)
		}
	}
}

// Issue 11 item 5 across instances: two gate instances in one group, each
// with its HTTP API and its read model (polling once an hour). What one
// instance has just written and acknowledged is found through the other
// at once: a lookup that finds nothing (an API key, an agent, an approval)
// first catches the read model up with every events partition
// (ReadModel.CatchUp), and an approval resolution finds the partition of
// its approval's agent the same way.
func TestKafkaHTTPWritesFoundThroughAnotherInstance(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	ga := startGate(t, brokers, lg, t.TempDir())
	gb := startGate(t, brokers, lg, t.TempDir())
	waitOwned(t, ga, gb)
	reg := engines(t)
	a := startHTTPOverKafkaPolling(t, brokers, lg, reg, 20*time.Second, time.Hour)
	b := startHTTPOverKafkaPolling(t, brokers, lg, reg, 20*time.Second, time.Hour)

	key := issueAndUse(t, a, b, "org_two", 50) // issued on a, used on b
	agent, token := rywAgent(t, a, key, "org_two_49")
	if st, body := b.raw(t, "GET", "/agents/"+agent, map[string]string{"Authorization": "Bearer " + token}); st != 200 {
		t.Fatalf("agent registered on a, read at once on b: %d %s", st, body)
	}
	for i := range 20 {
		id := pending(t, a, agent, token, i)
		st, ap := b.do(t, "GET", "/approvals/"+id, map[string]string{"X-API-Key": key}, "")
		if st != 200 || ap["status"] != "pending" {
			t.Fatalf("approval %d made on a, read at once on b: %d %v", i, st, ap)
		}
		id = pending(t, a, agent, token, 100+i)
		st, res := b.do(t, "POST", "/approvals/"+id+"/approve", map[string]string{"X-API-Key": key}, `{"reason":"ok"}`)
		if r, _ := res["approval"].(map[string]any); st != 200 || r["status"] != "approved" {
			t.Fatalf("approval %d made on a, approved at once on b: %d %v", i, st, res)
		}
	}
	// An approval that does not exist is still 404 (after the catch-up).
	if st, body := b.raw(t, "GET", "/approvals/act_00000000000000000000", map[string]string{"X-API-Key": key}); st != 404 {
		t.Fatalf("an unknown approval on b: %d %s, want 404", st, body)
	}
}
