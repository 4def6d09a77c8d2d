package kafkagate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams"
)

// refusals returns the raw command.rejected records of agent on every
// events partition.
func refusals(t *testing.T, lg *logs, agent string) [][]byte {
	t.Helper()
	var out [][]byte
	for p := int32(0); p < testPartitions; p++ {
		l, err := lg.open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		err = l.Read(context.Background(), 1, func(r streams.Record) error {
			ev, err := eventjson.DecodeEvent(r.Payload)
			if err != nil {
				return err
			}
			if ev.Type == domain.EvCommandRejected && ev.AgentID == agent {
				out = append(out, bytes.Clone(r.Payload))
			}
			return nil
		})
		_ = l.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Issue 11 item 4 in Kafka mode: a request on agentgate.requests with a
// made-up token and a large body, and the same over the HTTP API of a
// Kafka instance, are refused and recorded with the payload's digest and
// size only; a flood of bad-token HTTP requests from one address gets 429
// after the burst.
func TestKafkaRefusedCredentialsRecordADigest(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	cfg := domain.DefaultConfig()
	startGate(t, brokers, lg, t.TempDir(), func(c *kafkagate.Config) { c.Config = &cfg })
	c := newClient(t, brokers)
	agent, _ := register(t, c, "bot")
	const marker = "KAFKA-FILL-MARKER"
	// The largest query the field limits let through (issue 11 item 8).
	big := strings.Repeat("B", domain.MaxQueryBytes-len(marker)) + marker

	rep, err := c.Request(context.Background(), actionCmd(agent, "qwed_agent_made_up", "c", 1, big))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error domain.Error `json:"error"`
	}
	if err := json.Unmarshal(rep.Data, &body); err != nil || rep.Status != 401 || body.Error.Code != domain.CodeInvalidAgentToken {
		t.Fatalf("made-up token on the requests topic: %d %s", rep.Status, rep.Data)
	}

	h := startHTTPOverKafka(t, brokers, lg, engines(t), 10*time.Second, func(c *httpapi.Config) {
		c.RefusalLimit = httpapi.RefusalLimit{PerAddress: 1, Burst: 3}
		// The limiter refills with the API's clock: frozen, so the burst
		// does not refill however slowly the test runs (-race).
		frozen := time.Now()
		c.Clock = func() time.Time { return frozen }
	})
	req := `{"action":{"type":"calculate","query":"` + big + `"},"context":{"conversation_id":"c","step_number":1}}`
	st, m := h.do(t, "POST", "/agents/"+agent+"/verify", map[string]string{"Authorization": "Bearer x"}, req)
	if e, _ := m["error"].(map[string]any); st != 401 || e["code"] != string(domain.CodeInvalidAgentToken) {
		t.Fatalf("made-up token over HTTP on Kafka: %d %v", st, m)
	}

	recs := refusals(t, lg, agent)
	if len(recs) != 2 {
		t.Fatalf("%d refusals of the agent in the events topic, want 2", len(recs))
	}
	for _, r := range recs {
		ev, err := eventjson.DecodeEvent(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(r) > 2048 || bytes.Contains(r, []byte(marker)) || ev.Command.Withheld == nil || ev.Command.Withheld.Bytes < domain.MaxQueryBytes {
			t.Fatalf("a refusal records %d bytes (withheld %+v): %.300s", len(r), ev.Command.Withheld, r)
		}
	}

	// Two more refusals exhaust the burst of 3; then 429, recording nothing.
	for i := 0; i < 2; i++ {
		if st, m := h.do(t, "POST", "/agents/"+agent+"/verify", map[string]string{"Authorization": "Bearer x"}, req); st != 401 {
			t.Fatalf("refusal %d: %d %v", i, st, m)
		}
	}
	st, m = h.do(t, "POST", "/agents/"+agent+"/verify", map[string]string{"Authorization": "Bearer x"}, req)
	if e, _ := m["error"].(map[string]any); st != 429 || e["code"] != string(domain.CodeRateLimited) {
		t.Fatalf("over the burst: %d %v", st, m)
	}
	if n := len(refusals(t, lg, agent)); n != 4 {
		t.Fatalf("%d refusals recorded, want 4 (the 429 records nothing)", n)
	}
}
