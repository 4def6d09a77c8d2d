package kafkagate

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/cekafka/cekafkatest"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// forwardedVerdict is the event of a forwarded finance_guard verdict (QWED
// A2A's quick-start message) at seq 42 of its partition.
func forwardedVerdict() *domain.Event {
	msg := &a2a.Message{SenderAgentID: "procurement-agent", ReceiverAgentID: "treasury-agent", PayloadType: a2a.PayloadFinancial, TraceID: "demo_001",
		Payload: json.RawMessage(`{"data":{"claimed_total":150.00,"line_items":[{"description":"Widget A","amount":50.00,"quantity":2},{"description":"Widget B","amount":25.00,"quantity":2}]}}`)}
	return &domain.Event{Seq: 42, Type: domain.EvA2AVerdict, Time: time.Date(2026, 1, 15, 10, 0, 0, 125_000_000, time.UTC),
		Command: &domain.Command{Type: domain.CmdA2AMessage, Request: domain.RequestID{Source: "orders-platform", ID: "a2a-1"}, A2A: msg},
		A2AVerdict: &domain.A2AVerdict{Boundary: "*", Sender: msg.SenderAgentID, Receiver: msg.ReceiverAgentID, PayloadType: msg.PayloadType,
			Status: a2a.StatusForwarded, Reason: "verified", Engine: a2a.EngineFinance, TraceID: "demo_001",
			PayloadDigest: "sha256:00", Attestation: "eyJhbGciOiJFUzI1NiJ9.e30.sig"}}
}

// Issue 13 item 8, the contract of agentgate.a2a.forwarded: the wire form
// of a forwarded message is frozen in
// schemas/testdata/ce_kafka_a2a_forwarded.json (key, headers in order,
// value), a binary-mode CloudEvent a consumer decodes (type
// qwed.a2a.forwarded, id P-SEQ, subject the receiver), on the receiver's
// partition; a verdict of another status, or another event, is no
// forward.
func TestFrozenForwardedMessageFixture(t *testing.T) {
	ev := forwardedVerdict()
	m, ok := forwardMessage(3, ev, 8)
	if !ok || m.Partition != int(PartitionFor("treasury-agent", 8)) {
		t.Fatalf("forwardMessage: %v partition %d", ok, m.Partition)
	}
	m.Topic, m.Partition = DefaultTopics().A2A, 0
	path := filepath.Join(fixtureDir, "ce_kafka_a2a_forwarded.json")
	if *rewrite {
		if err := cekafkatest.Write(path, cekafkatest.Describe("a forwarded A2A message on agentgate.a2a.forwarded: binary mode, key = the receiver, value = the AgentMessage, the verdict in qwed-a2a-* headers, its event (partition 3, seq 42) in agentgate-events-*", m)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := cekafkatest.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Message(); !reflect.DeepEqual(m, got) {
		t.Fatalf("the gate no longer produces the frozen forward:\n got %+v\nwant %+v", cekafkatest.Describe("", m), f)
	}
	dec, err := cekafka.DecodeReply(f.Message())
	if err != nil {
		t.Fatal(err)
	}
	if dec.Type != kafkaout.ForwardedType || dec.ID != "3-42" || dec.Subject != "treasury-agent" || dec.Extensions["correlationid"] != "a2a-1" {
		t.Fatalf("decoded forward %+v", dec)
	}
	for _, other := range []func(*domain.Event){
		func(e *domain.Event) { e.A2AVerdict.Status = a2a.StatusBlocked },
		func(e *domain.Event) { e.A2AVerdict.Status = a2a.StatusRateLimited },
		func(e *domain.Event) { e.Type = domain.EvA2ABoundaryChanged },
		func(e *domain.Event) { e.Command.A2A = nil },
	} {
		e := forwardedVerdict()
		other(e)
		if _, ok := forwardMessage(3, e, 8); ok {
			t.Fatalf("%+v forwarded", e.A2AVerdict)
		}
	}
	// The AgentMessage keeps its bytes: no HTML escaping (encoding/json's
	// default would make each "<" six bytes, in the payload too).
	html := forwardedVerdict()
	html.Command.A2A.Payload = json.RawMessage(`{"message":"<b>a & b</b>"}`)
	html.Command.A2A.TraceID = "t<1>"
	if m, _ := forwardMessage(3, html, 8); !strings.Contains(string(m.Value), `"payload":{"message":"<b>a & b</b>"}`) || !strings.Contains(string(m.Value), `"trace_id":"t<1>"`) {
		t.Fatalf("the forward escaped the message: %s", m.Value)
	}
	shadow := forwardedVerdict()
	shadow.A2AVerdict.Shadow = true
	if m, _ := forwardMessage(3, shadow, 8); string(m.Headers[len(m.Headers)-1].Value) != "true" || m.Headers[len(m.Headers)-1].Key != kafkaout.HeaderA2AShadow {
		t.Fatalf("a shadow forward's headers %v", m.Headers)
	}
}

// The cursor's metadata round-trips; one over Kafka's default metadata
// bound keeps no end offsets (the recovery then scans whole partitions).
func TestCursorMetadata(t *testing.T) {
	for _, ends := range [][]int64{nil, {0}, {7, 0, 123456789012}} {
		got, ok := parseEnds(formatEnds(ends))
		if !ok || len(got) != len(ends) || (len(ends) > 0 && !reflect.DeepEqual(got, ends)) {
			t.Fatalf("%v round-trips to %v %v", ends, got, ok)
		}
	}
	big := make([]int64, 1000)
	for i := range big {
		big[i] = 1 << 40
	}
	if md := formatEnds(big); md != cursorVersion {
		t.Fatalf("an oversized cursor's metadata is %d bytes", len(md))
	}
	for _, bad := range []string{"", "v2:1", "v1:x", "v1:1,,2", "v1:-1"} {
		if _, ok := parseEnds(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}

// FuzzCursorMetadata: whatever a cursor's metadata holds (the group is
// writable by any client of the cluster), parsing it never panics, and
// what parses formats back to the same text.
func FuzzCursorMetadata(f *testing.F) {
	for _, s := range []string{"v1:", "v1:0,1,2", "v1:9223372036854775807", "v1:-1", "v1:1,,", strings.Repeat("v1:1", 3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		ends, ok := parseEnds(md)
		if !ok {
			return
		}
		canon := true
		for _, part := range strings.Split(strings.TrimPrefix(md, cursorVersion), ",") {
			if v, err := strconv.ParseInt(part, 10, 64); err == nil && strconv.FormatInt(v, 10) != part {
				canon = false
			}
		}
		if canon && len(md) <= maxCursorMetadata && formatEnds(ends) != md {
			t.Fatalf("%q parses to %v, formats to %q", md, ends, formatEnds(ends))
		}
	})
}
