package kafkagate_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
)

// a2aHTTP is the HTTP API over Kafka as gatetest's A2A examples send to
// it.
func (h *httpOverKafka) a2aHTTP() gatetest.HTTP { return h.send }

// issueKeyOver issues an API key for principal through h.
func issueKeyOver(t *testing.T, h *httpOverKafka, principal string) string {
	t.Helper()
	st, k := h.do(t, "POST", "/principals/"+principal+"/keys", map[string]string{"X-API-Key": adminKey}, "")
	key, _ := k["api_key"].(string)
	if st != http.StatusCreated || key == "" {
		t.Fatalf("issuing a key for %s: %d %v", principal, st, k)
	}
	return key
}

// a2aClock is the manual clock of the A2A tests' gates: the pairs' token
// buckets refill from the command's time.
func a2aClock() *gatetest.Clock {
	return gatetest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
}

// Issue 13 on Kafka: the QWED A2A seed's examples over the HTTP API of an
// instance in Kafka mode (HTTPGate sends each message to its sender's
// partition; boundary changes go to every partition): financial forwarded
// and blocked, the logic contradiction, each code pattern, passthrough,
// the rate limit with Retry-After, the trust boundary's order, tenant
// isolation.
func TestKafkaA2AOverHTTP(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	clock := a2aClock()
	dir := t.TempDir()
	// Started as with QWED_A2A_TRUSTED_AGENTS="agent-A,agent-B" and 4 KiB
	// payloads.
	a2aCfg := domain.DefaultA2AConfig()
	a2aCfg.TrustedAgents, a2aCfg.MaxPayloadSizeBytes = []string{"agent-A", "agent-B"}, 4096
	cfg := domain.DefaultConfig()
	cfg.A2A = &a2aCfg
	startGate(t, brokers, lg, dir, func(c *kafkagate.Config) { c.Clock, c.Config = clock.Now, &cfg })
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second,
		func(c *httpapi.Config) { c.A2AMaxPayloadBytes = a2aCfg.MaxPayloadSizeBytes })
	do := h.a2aHTTP()
	t.Run("the seed's curl", func(t *testing.T) {
		a := gatetest.Intercept(t, do, map[string]string{"X-API-Key": issueKeyOver(t, h, "org_curl"), "Content-Type": "application/json"}, `{
    "sender_agent_id": "agent-A",
    "receiver_agent_id": "agent-B",
    "payload_type": "general",
    "payload": {"message": "Hello!"}
  }`)
		if v := a.Verdict(t); a.Status != 200 || v.Status != "forwarded" || v.EngineUsed != "passthrough" {
			t.Fatalf("the seed's curl: %d %s", a.Status, a.Body)
		}
	})
	t.Run("over size", func(t *testing.T) {
		key := issueKeyOver(t, h, "org_size")
		a := gatetest.Intercept(t, do, gatetest.Key(key), gatetest.A2AMessage("agent-A", "agent-B", "general",
			`{"m":"`+strings.Repeat("x", 4096+a2a.MaxEnvelopeBytes)+`"}`))
		if a.Status != http.StatusRequestEntityTooLarge || a.ErrorCode() != string(domain.CodeTooLong) {
			t.Fatalf("a body over the bound: %d %s", a.Status, a.Body)
		}
		a = gatetest.Intercept(t, do, gatetest.Key(key), gatetest.A2AMessage("agent-A", "agent-B", "general",
			`{"m":"`+strings.Repeat("x", 5000)+`"}`))
		if a.Status != http.StatusRequestEntityTooLarge || a.ErrorCode() != string(domain.CodeTooLong) {
			t.Fatalf("a payload over max_payload_size_bytes: %d %s", a.Status, a.Body)
		}
	})
	t.Run("seed examples", func(t *testing.T) {
		att := gatetest.A2ASeedExamples(t, do, issueKeyOver(t, h, "org_seed"))
		// Signed by the partition's gate: verifiable against its keys.
		kr, err := attest.OpenKeyring(dir)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := attest.ParseJWKS(kr.JWKS())
		if err != nil {
			t.Fatal(err)
		}
		if c, err := keys.VerifyA2A(att, clock.Now()); err != nil || c.A2A.Verdict != "forwarded" {
			t.Fatalf("the forwarded verdict's attestation: %+v %v", c, err)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		gatetest.A2ARateLimit(t, do, issueKeyOver(t, h, "org_rate"), 60, 60, clock.Advance)
	})
	t.Run("boundary order", func(t *testing.T) { gatetest.A2ABoundaryOrder(t, do, issueKeyOver(t, h, "org_order")) })
	t.Run("tenants", func(t *testing.T) {
		gatetest.A2ATenants(t, do, adminKey, issueKeyOver(t, h, "org_ta"), issueKeyOver(t, h, "org_tb"))
	})
	t.Run("credentials", func(t *testing.T) {
		key := issueKeyOver(t, h, "org_cred")
		agent, token := rywAgent(t, h, key, "org_cred")
		bearer := map[string]string{"Authorization": "Bearer " + token}
		if a := gatetest.Intercept(t, do, nil, gatetest.A2AMessage(agent, "ledger", "general", `{}`)); a.Status != http.StatusUnauthorized {
			t.Fatalf("no credentials: %d %s", a.Status, a.Body)
		}
		other, _ := rywAgent(t, h, key, "org_cred")
		a := gatetest.Intercept(t, do, bearer, gatetest.A2AMessage(other, "ledger", "general", `{}`))
		if a.Status != http.StatusUnauthorized || a.ErrorCode() != string(domain.CodeInvalidAgentToken) {
			t.Fatalf("an agent token sending as another agent: %d %s", a.Status, a.Body)
		}
		gatetest.A2ATrust(t, do, key, agent, "ledger")
		a = gatetest.Intercept(t, do, bearer, gatetest.A2AMessage(agent, "ledger", "general", `{}`))
		if v := a.Verdict(t); a.Status != 200 || v.Status != "forwarded" {
			t.Fatalf("the agent's own message, trusted by its principal: %d %s", a.Status, a.Body)
		}
		if a := do(t, "POST", "/a2a/boundary/trust/"+agent, bearer, ""); a.Status != http.StatusForbidden {
			t.Fatalf("an agent token changes a boundary: %d %s", a.Status, a.Body)
		}
	})
}

// sendersOnEveryPartition returns one sender name per partition.
func sendersOnEveryPartition(prefix string) []string {
	out := make([]string, testPartitions)
	for i, found := 0, 0; found < testPartitions; i++ {
		s := fmt.Sprintf("%s-%d", prefix, i)
		if p := kafkagate.PartitionFor(s, testPartitions); out[p] == "" {
			out[p] = s
			found++
		}
	}
	return out
}

// Issue 13 on Kafka: a boundary change reaches every partition before it
// is answered, so a message of any sender decided right after it, through
// the instance that answered it or through another, is decided under it;
// an Idempotency-Key retry through another instance gets the recorded
// verdict byte for byte.
func TestKafkaA2ABoundaryOnEveryPartition(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	ga := startGate(t, brokers, lg, t.TempDir())
	gb := startGate(t, brokers, lg, t.TempDir())
	waitOwned(t, ga, gb)
	reg := engines(t)
	a := startHTTPOverKafkaPolling(t, brokers, lg, reg, 20*time.Second, time.Hour)
	b := startHTTPOverKafkaPolling(t, brokers, lg, reg, 20*time.Second, time.Hour)
	key := issueKeyOver(t, a, "org_every")
	senders := sendersOnEveryPartition("every")
	gatetest.A2ATrust(t, a.a2aHTTP(), key, append(senders, "every-receiver")...)
	// Readable at once through the instance that answered (its read model
	// polls once an hour: only the write's own wait makes it so).
	st, bd := a.do(t, "GET", "/a2a/boundary", map[string]string{"X-API-Key": key}, "")
	trusted, _ := bd["trusted_agents"].(map[string]any)
	if n, _ := trusted["count"].(float64); st != 200 || int(n) != len(senders)+1 {
		t.Fatalf("the boundary read at once after its writes: %d %v", st, bd)
	}
	for i, s := range senders {
		for _, h := range []*httpOverKafka{a, b} {
			r := gatetest.Intercept(t, h.a2aHTTP(), gatetest.Key(key), gatetest.A2AMessage(s, "every-receiver", "general", `{"n":1}`))
			if v := r.Verdict(t); r.Status != 200 || v.Status != "forwarded" {
				t.Fatalf("sender %s (partition %d) right after the trust: %d %s", s, i, r.Status, r.Body)
			}
		}
	}
	gatetest.A2ABoundary(t, b.a2aHTTP(), adminKey, "POST", "/a2a/boundary/block/every-receiver", "")
	for i, s := range senders {
		for _, h := range []*httpOverKafka{b, a} {
			r := gatetest.Intercept(t, h.a2aHTTP(), gatetest.Key(key), gatetest.A2AMessage(s, "every-receiver", "general", `{"n":2}`))
			if v := r.Verdict(t); r.Status != 200 || v.Status != "blocked" {
				t.Fatalf("sender %s (partition %d) right after the gate-wide block: %d %s", s, i, r.Status, r.Body)
			}
		}
	}
	hd := map[string]string{"X-API-Key": key, "Idempotency-Key": "kafka-a2a-1"}
	body := gatetest.A2AMessage(senders[0], "every-receiver", "general", `{"n":3}`)
	first := gatetest.Intercept(t, a.a2aHTTP(), hd, body)
	again := gatetest.Intercept(t, b.a2aHTTP(), hd, body)
	if first.Status != 200 || again.Status != 200 || string(first.Body) != string(again.Body) {
		t.Fatalf("a retry through another instance: %d %s then %d %s", first.Status, first.Body, again.Status, again.Body)
	}
}

// Issue 13 on Kafka: an AgentMessage's payload is recorded in its event,
// one record of the events log, where each <, > and & takes a six-byte
// escape. The HTTP API of a Kafka instance (bounded as serve bounds it,
// kafkagate.MaxA2APayloadBytes) forwards the largest payload whose event
// fits, with the longest ids, trace id and timestamp, and refuses one
// byte more with 413 QWED-REQ-004, escapes counted; it answered 503
// (retry) once the append failed.
func TestKafkaA2APayloadFitsItsEvent(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	startGate(t, brokers, lg, t.TempDir())
	h := startHTTPOverKafka(t, brokers, lg, engines(t), 20*time.Second,
		func(c *httpapi.Config) { c.A2AMaxPayloadBytes = kafkagate.MaxA2APayloadBytes })
	key := issueKeyOver(t, h, "org_big")
	s, r := strings.Repeat("s", 256), strings.Repeat("r", 256)
	gatetest.A2ATrust(t, h.a2aHTTP(), key, s, r)
	const fill = len(`{"m":""}`)
	for _, c := range []struct {
		char   string
		n      int
		status int
	}{
		{"x", kafkagate.MaxA2APayloadBytes - fill, 200},
		{"x", kafkagate.MaxA2APayloadBytes - fill + 1, http.StatusRequestEntityTooLarge},
		{"<", (kafkagate.MaxA2APayloadBytes - fill) / 6, 200},
		{"<", (kafkagate.MaxA2APayloadBytes-fill)/6 + 1, http.StatusRequestEntityTooLarge},
	} {
		a := gatetest.Intercept(t, h.a2aHTTP(), gatetest.Key(key), `{"sender_agent_id":"`+s+`","receiver_agent_id":"`+r+
			`","trace_id":"`+strings.Repeat("t", a2a.MaxTraceIDBytes)+`","timestamp":"2026-03-02T10:00:00.123456789+05:30","payload":{"m":"`+
			strings.Repeat(c.char, c.n)+`"}}`)
		if a.Status != c.status || c.status == 200 && a.Verdict(t).Status != "forwarded" ||
			c.status != 200 && a.ErrorCode() != string(domain.CodeTooLong) {
			t.Fatalf("%d × %q: %d %.300s, want %d", c.n, c.char, a.Status, a.Body, c.status)
		}
	}
}
