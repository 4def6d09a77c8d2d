package cekafka_test

import (
	"flag"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/cekafka/cekafkatest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the Kafka request fixtures in schemas/testdata from the current encoder")

const fixtureDir = "../../schemas/testdata"

// fixtureEvent is the QWED-Agent spec v1.1 §4.1 verify_action example as a command.
func fixtureEvent(mode ce.Mode, step string) ce.Event {
	return ce.Event{
		SpecVersion:     "1.0",
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/agent_xyz789",
		ID:              "0b6c2f4e-5a1d-4e8f-9c3b-00000000000" + step,
		Subject:         "agent_xyz789",
		Time:            time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC),
		DataContentType: "application/json",
		Data: []byte(`{"agent_id":"agent_xyz789","agent_token":"qwed_agent_fixture_token","action":{"type":"execute_sql","query":"SELECT * FROM customers WHERE status = 'active'","target":"production_db"},"context":{"conversation_id":"conv_123","step_number":` +
			step + `,"user_intent":"Get list of active customers"},"options":{"require_attestation":true,"risk_threshold":"medium"}}`),
		Extensions: map[string]string{"correlationid": "conv_123/" + step, "replyto": "agentgate.replies", "partitionkey": "agent_xyz789"},
		Mode:       mode,
	}
}

var kafkaFixtures = []struct {
	file, desc string
	want       ce.Event
}{
	{"ce_kafka_binary_request.json", "qwed.agent.action.verify in Kafka binary mode (ce_ headers, value = data, key = partitionkey), topic agentgate.requests", fixtureEvent(ce.ModeBinary, "5")},
	{"ce_kafka_structured_request.json", "qwed.agent.action.verify in Kafka structured mode (value = application/cloudevents+json event, key = partitionkey), topic agentgate.requests", fixtureEvent(ce.ModeStructured, "6")},
}

// TestFrozenKafkaFixtures decodes the published request fixtures and
// checks that the encoder still produces them byte for byte (key, headers
// in order, value).
func TestFrozenKafkaFixtures(t *testing.T) {
	for _, fx := range kafkaFixtures {
		t.Run(fx.file, func(t *testing.T) {
			path := filepath.Join(fixtureDir, fx.file)
			enc, err := cekafka.Encode(fx.want)
			if err != nil {
				t.Fatalf("encoding: %v", err)
			}
			if *rewrite {
				enc.Topic = "agentgate.requests"
				if err := cekafkatest.Write(path, cekafkatest.Describe(fx.desc, enc)); err != nil {
					t.Fatal(err)
				}
			}
			f, err := cekafkatest.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			msg := f.Message()
			got, err := cekafka.Decode(msg)
			if err != nil {
				t.Fatalf("decoding fixture: %v", err)
			}
			if !reflect.DeepEqual(got, fx.want) {
				t.Fatalf("fixture decodes to\n %+v\nwant\n %+v", got, fx.want)
			}
			enc.Topic = msg.Topic
			if !reflect.DeepEqual(enc, msg) {
				t.Fatalf("encoder no longer produces the frozen fixture:\n got %+v\nwant %+v", cekafkatest.Describe("", enc), f)
			}
		})
	}
}
