package kafkagate

import (
	"flag"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/cekafka/cekafkatest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the Kafka reply fixtures in schemas/testdata from the current encoder")

const fixtureDir = "../../schemas/testdata"

// fixtureReplyBody is QWED-Agent spec v1.1 §4.1's verify_action response (APPROVED).
const fixtureReplyBody = `{"action_id":"act_9f2c4e6a8b0d1f3e5a7c","decision":"APPROVED","conversation_id":"conv_123","step_number":5,` +
	`"verification":{"status":"VERIFIED","engine":"sql","risk_level":"low","checks_passed":["context_valid","within_step_limit","no_replay","no_repetition","action_type_known","engine_allowed","engine_verified","trust_sufficient","within_budget"]},` +
	`"budget_remaining":{"daily_cost_usd":"49.90","hourly_requests":999}}`

// TestFrozenKafkaReplyFixtures pins the published wire form of a reply on
// agentgate.replies in both modes: the reply to each frozen request
// fixture (schemas/testdata/ce_kafka_*_request.json) is encoded byte for
// byte as frozen in ce_kafka_*_reply.json (key, headers in order with the
// status last, value), and a client decodes the fixture to the reply's
// attributes: type <type>.reply, source agentgate, the reply id of the
// request, its correlationid and partitionkey, the data, the status.
func TestFrozenKafkaReplyFixtures(t *testing.T) {
	at := time.Date(2026, 1, 15, 10, 0, 0, 125_000_000, time.UTC)
	for _, fx := range []struct{ request, reply, desc string }{
		{"ce_kafka_binary_request.json", "ce_kafka_binary_reply.json",
			"reply to ce_kafka_binary_request.json on agentgate.replies: binary mode (ce_ headers, value = the endpoint's body, key = partitionkey), HTTP status in agentgate-status"},
		{"ce_kafka_structured_request.json", "ce_kafka_structured_reply.json",
			"reply to ce_kafka_structured_request.json on agentgate.replies: structured mode (value = application/cloudevents+json event, key = partitionkey), HTTP status in agentgate-status"},
	} {
		t.Run(fx.reply, func(t *testing.T) {
			reqFx, err := cekafkatest.Read(filepath.Join(fixtureDir, fx.request))
			if err != nil {
				t.Fatal(err)
			}
			req, err := cekafka.Decode(reqFx.Message())
			if err != nil {
				t.Fatalf("decoding the request fixture: %v", err)
			}
			enc, err := replyMessage(req, req.Extensions[ce.ExtReplyTo], 200, []byte(fixtureReplyBody), at)
			if err != nil {
				t.Fatal(err)
			}
			if enc.Partition != -1 {
				t.Fatalf("a reply's partition is %d, want -1 (hashed from its key when written)", enc.Partition)
			}
			enc.Partition = 0 // not part of the message's bytes
			path := filepath.Join(fixtureDir, fx.reply)
			if *rewrite {
				if err := cekafkatest.Write(path, cekafkatest.Describe(fx.desc, enc)); err != nil {
					t.Fatal(err)
				}
			}
			f, err := cekafkatest.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			msg := f.Message()
			if !reflect.DeepEqual(enc, msg) {
				t.Fatalf("the gate no longer produces the frozen reply:\n got %+v\nwant %+v", cekafkatest.Describe("", enc), f)
			}
			got, err := cekafka.DecodeReply(msg)
			if err != nil {
				t.Fatalf("decoding the reply fixture: %v", err)
			}
			want := ce.NewReply(req, []byte(fixtureReplyBody), at)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("reply fixture decodes to\n %+v\nwant\n %+v", got, want)
			}
			if got.Type != "qwed.agent.action.verify.reply" || got.Source != "agentgate" || got.Extensions["correlationid"] != req.Extensions["correlationid"] ||
				string(msg.Key) != "agent_xyz789" || !reflect.DeepEqual(msg.Headers[len(msg.Headers)-1], kafka.Header{Key: HeaderStatus, Value: []byte("200")}) {
				t.Fatalf("reply attributes: %+v key %q headers %v", got, msg.Key, msg.Headers)
			}
		})
	}
}
