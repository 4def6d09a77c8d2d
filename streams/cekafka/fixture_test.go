package cekafka_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the Kafka request fixtures in schemas/testdata from the current encoder")

const fixtureDir = "../../schemas/testdata"

// fixtureMessage is the JSON description of a Kafka message in
// schemas/testdata/ce_kafka_*.json: key and value as UTF-8 text, headers
// in wire order.
type fixtureMessage struct {
	Description string          `json:"description"`
	Topic       string          `json:"topic"`
	Key         string          `json:"key"`
	Headers     []fixtureHeader `json:"headers"`
	Value       string          `json:"value"`
}

type fixtureHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (f fixtureMessage) message() kafka.Message {
	msg := kafka.Message{Topic: f.Topic, Value: []byte(f.Value)}
	if f.Key != "" {
		msg.Key = []byte(f.Key)
	}
	for _, h := range f.Headers {
		msg.Headers = append(msg.Headers, kafka.Header{Key: h.Key, Value: []byte(h.Value)})
	}
	return msg
}

func describe(desc, topic string, msg kafka.Message) fixtureMessage {
	f := fixtureMessage{Description: desc, Topic: topic, Key: string(msg.Key), Value: string(msg.Value)}
	for _, h := range msg.Headers {
		f.Headers = append(f.Headers, fixtureHeader{Key: h.Key, Value: string(h.Value)})
	}
	return f
}

// fixtureEvent is the seed 000 §4.1 verify_action example as a command.
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
				b, err := json.MarshalIndent(describe(fx.desc, "agentgate.requests", enc), "", "  ")
				if err != nil {
					t.Fatalf("marshalling fixture: %v", err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatalf("writing fixture: %v", err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading fixture: %v", err)
			}
			var f fixtureMessage
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				t.Fatalf("parsing fixture: %v", err)
			}
			msg := f.message()
			got, err := cekafka.Decode(msg)
			if err != nil {
				t.Fatalf("decoding fixture: %v", err)
			}
			if !reflect.DeepEqual(got, fx.want) {
				t.Fatalf("fixture decodes to\n %+v\nwant\n %+v", got, fx.want)
			}
			enc.Topic = msg.Topic
			if !reflect.DeepEqual(enc, msg) {
				t.Fatalf("encoder no longer produces the frozen fixture:\n got %+v\nwant %+v", describe("", enc.Topic, enc), f)
			}
		})
	}
}
