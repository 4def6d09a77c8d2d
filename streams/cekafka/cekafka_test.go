package cekafka_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

func command(mode ce.Mode) ce.Event {
	return ce.Event{
		SpecVersion:     ce.SpecVersion,
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/a1",
		ID:              "req-1",
		Subject:         "a1",
		Time:            time.Date(2026, 1, 15, 10, 0, 0, 123456789, time.UTC),
		DataContentType: ce.ContentTypeJSON,
		Data:            []byte(`{"agent_id":"a1","action":{"type":"execute_sql","query":"SELECT 1 WHERE a < b && c > d"}}`),
		Extensions: map[string]string{
			ce.ExtCorrelationID: "corr-9",
			ce.ExtReplyTo:       "agentgate.replies",
			ce.ExtPartitionKey:  "a1",
		},
		Mode: mode,
	}
}

func header(msg kafka.Message, name string) (string, bool) {
	for _, h := range msg.Headers {
		if h.Key == name {
			return string(h.Value), true
		}
	}
	return "", false
}

// TestRoundTripBothModes pins Encode then Decode as the identity in binary
// and structured mode, with the partitionkey as the message key.
func TestRoundTripBothModes(t *testing.T) {
	for _, mode := range []ce.Mode{ce.ModeBinary, ce.ModeStructured} {
		t.Run(mode.String(), func(t *testing.T) {
			in := command(mode)
			msg, err := cekafka.Encode(in)
			if err != nil {
				t.Fatalf("encoding: %v", err)
			}
			if string(msg.Key) != "a1" {
				t.Fatalf("key = %q, want the partitionkey a1", msg.Key)
			}
			ct, _ := header(msg, cekafka.HeaderContentType)
			if mode == ce.ModeStructured && ct != cekafka.MediaStructured || mode == ce.ModeBinary && ct != ce.ContentTypeJSON {
				t.Fatalf("%v mode: content-type = %q", mode, ct)
			}
			if _, ok := header(msg, "ce_id"); ok != (mode == ce.ModeBinary) {
				t.Fatalf("%v mode: ce_id header present = %v", mode, ok)
			}
			if mode == ce.ModeBinary && !bytes.Equal(msg.Value, in.Data) {
				t.Fatalf("binary value = %s, want the data verbatim", msg.Value)
			}
			out, err := cekafka.Decode(msg)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if !reflect.DeepEqual(out, in) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
			}
		})
	}
}

// TestDesign3PartitionKeyIsMessageKey pins the contract partitionkey =
// Kafka key: the key fills a missing partitionkey, a different one is
// refused, no partitionkey means no key.
func TestDesign3PartitionKeyIsMessageKey(t *testing.T) {
	for _, mode := range []ce.Mode{ce.ModeBinary, ce.ModeStructured} {
		in := command(mode)
		delete(in.Extensions, ce.ExtPartitionKey)
		msg, err := cekafka.Encode(in)
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		if msg.Key != nil {
			t.Fatalf("%v: key = %q without a partitionkey", mode, msg.Key)
		}
		msg.Key = []byte("agent-7")
		out, err := cekafka.Decode(msg)
		if err != nil || out.Extensions[ce.ExtPartitionKey] != "agent-7" {
			t.Fatalf("%v: decode with key only = %v, partitionkey %q", mode, err, out.Extensions[ce.ExtPartitionKey])
		}
		msg.Key = []byte(strings.Repeat("k", ce.MaxAttributeBytes+1))
		if _, err := cekafka.Decode(msg); !errors.Is(err, ce.ErrTooLarge) {
			t.Fatalf("%v: oversized key = %v, want ErrTooLarge", mode, err)
		}

		in = command(mode)
		msg, err = cekafka.Encode(in)
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		msg.Key = []byte("someone-else")
		_, err = cekafka.Decode(msg)
		var cerr *ce.Error
		if !errors.Is(err, ce.ErrInvalid) || !errors.As(err, &cerr) || cerr.Attribute != ce.ExtPartitionKey {
			t.Fatalf("%v: partitionkey differing from the key = %v, want ErrInvalid on partitionkey", mode, err)
		}
	}
}

func binaryMessage(headers map[string]string, value string) kafka.Message {
	msg := kafka.Message{Value: []byte(value)}
	for _, k := range []string{"ce_specversion", "ce_id", "ce_source", "ce_type", "ce_subject", "ce_time", "content-type", "ce_partitionkey", "ce_other"} {
		if v, ok := headers[k]; ok {
			msg.Headers = append(msg.Headers, kafka.Header{Key: k, Value: []byte(v)})
		}
	}
	return msg
}

func validHeaders() map[string]string {
	return map[string]string{"ce_specversion": "1.0", "ce_id": "i1", "ce_source": "//s", "ce_type": "qwed.verify", "content-type": "application/json"}
}

// TestDecodeRefusesWithTypedErrors pins the errors the caller maps to
// QWED-REQ-001 (ErrInvalid) and QWED-REQ-004 (ErrTooLarge), with the
// attribute at fault.
func TestDecodeRefusesWithTypedErrors(t *testing.T) {
	with := func(k, v string) map[string]string { h := validHeaders(); h[k] = v; return h }
	without := func(k string) map[string]string { h := validHeaders(); delete(h, k); return h }
	cases := []struct {
		name string
		msg  kafka.Message
		kind error
		attr string
	}{
		{"no ce headers nor structured content type", kafka.Message{Value: []byte(`{}`), Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/json")}}}, ce.ErrInvalid, ""},
		{"specversion 0.3", binaryMessage(with("ce_specversion", "0.3"), `{}`), ce.ErrInvalid, "specversion"},
		{"missing id", binaryMessage(without("ce_id"), `{}`), ce.ErrInvalid, "id"},
		{"missing source", binaryMessage(without("ce_source"), `{}`), ce.ErrInvalid, "source"},
		{"missing type", binaryMessage(without("ce_type"), `{}`), ce.ErrInvalid, "type"},
		{"missing content type in binary mode", binaryMessage(without("content-type"), `{}`), ce.ErrInvalid, "datacontenttype"},
		{"data not JSON", binaryMessage(validHeaders(), `{"a":`), ce.ErrInvalid, "data"},
		{"no data", binaryMessage(validHeaders(), ``), ce.ErrInvalid, "data"},
		{"text data", binaryMessage(with("content-type", "text/plain"), `hello`), ce.ErrInvalid, "datacontenttype"},
		{"bad time", binaryMessage(with("ce_time", "yesterday"), `{}`), ce.ErrInvalid, ""},
		{"batch mode", kafka.Message{Value: []byte(`[]`), Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/cloudevents-batch+json")}}}, ce.ErrInvalid, ""},
		{"structured not JSON", kafka.Message{Value: []byte(`{"specversion":`), Headers: []kafka.Header{{Key: "content-type", Value: []byte(cekafka.MediaStructured)}}}, ce.ErrInvalid, ""},
		{"duplicate id header", func() kafka.Message {
			m := binaryMessage(validHeaders(), `{}`)
			m.Headers = append(m.Headers, kafka.Header{Key: "CE_ID", Value: []byte("i2")})
			return m
		}(), ce.ErrInvalid, "id"},
		{"empty extension name", func() kafka.Message {
			m := binaryMessage(validHeaders(), `{}`)
			m.Headers = append(m.Headers, kafka.Header{Key: "ce_", Value: []byte("x")})
			return m
		}(), ce.ErrInvalid, ""},
		{"id over the limit", binaryMessage(with("ce_id", strings.Repeat("i", ce.MaxAttributeBytes+1)), `{}`), ce.ErrTooLarge, "id"},
		{"type over the request limit", binaryMessage(with("ce_type", strings.Repeat("t", ce.MaxRequestTypeBytes+1)), `{}`), ce.ErrTooLarge, "type"},
		{"partitionkey over the limit", binaryMessage(with("ce_partitionkey", strings.Repeat("p", ce.MaxAttributeBytes+1)), `{}`), ce.ErrTooLarge, "partitionkey"},
		{"headers over the limit", binaryMessage(with("ce_other", strings.Repeat("o", cekafka.MaxHeaderBytes)), `{}`), ce.ErrTooLarge, ""},
		{"value over the limit", binaryMessage(validHeaders(), `"`+strings.Repeat("v", ce.MaxBodyBytes-1)+`"`), ce.ErrTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := cekafka.Decode(c.msg)
			var cerr *ce.Error
			if !errors.As(err, &cerr) || !errors.Is(err, c.kind) {
				t.Fatalf("Decode = %v, want a *ce.Error of kind %v", err, c.kind)
			}
			if c.attr != "" && cerr.Attribute != c.attr {
				t.Fatalf("attribute = %q, want %q (%v)", cerr.Attribute, c.attr, err)
			}
		})
	}
}

// TestLimitsBothSides pins each limit at exactly its value (accepted) and
// one more (ErrTooLarge).
func TestLimitsBothSides(t *testing.T) {
	atLimit := []struct {
		name string
		msg  kafka.Message
	}{
		{"value of MaxBodyBytes", binaryMessage(validHeaders(), `"`+strings.Repeat("v", ce.MaxBodyBytes-2)+`"`)},
		{"id of MaxAttributeBytes", func() kafka.Message {
			h := validHeaders()
			h["ce_id"] = strings.Repeat("i", ce.MaxAttributeBytes)
			return binaryMessage(h, `{}`)
		}()},
		{"type of MaxRequestTypeBytes", func() kafka.Message {
			h := validHeaders()
			h["ce_type"] = strings.Repeat("t", ce.MaxRequestTypeBytes)
			return binaryMessage(h, `{}`)
		}()},
		{"headers of MaxHeaderBytes", func() kafka.Message {
			m := binaryMessage(validHeaders(), `{}`)
			n := 0
			for _, h := range m.Headers {
				n += len(h.Key) + len(h.Value)
			}
			m.Headers = append(m.Headers, kafka.Header{Key: "x", Value: bytes.Repeat([]byte("o"), cekafka.MaxHeaderBytes-n-1)})
			return m
		}()},
		{"key of MaxAttributeBytes", func() kafka.Message {
			m := binaryMessage(validHeaders(), `{}`)
			m.Key = bytes.Repeat([]byte("k"), ce.MaxAttributeBytes)
			return m
		}()},
	}
	for _, c := range atLimit {
		if _, err := cekafka.Decode(c.msg); err != nil {
			t.Fatalf("%s: Decode = %v, want accepted", c.name, err)
		}
	}
	reply := binaryMessage(validHeaders(), `{}`)
	reply.Headers[3].Value = bytes.Repeat([]byte("t"), ce.MaxAttributeBytes)
	if _, err := cekafka.DecodeReply(reply); err != nil {
		t.Fatalf("DecodeReply with a type of MaxAttributeBytes = %v", err)
	}
	if _, err := cekafka.Decode(reply); !errors.Is(err, ce.ErrTooLarge) {
		t.Fatalf("Decode of a request with a type of MaxAttributeBytes = %v, want ErrTooLarge", err)
	}
	big := command(ce.ModeBinary)
	big.Data = []byte(`"` + strings.Repeat("v", ce.MaxBodyBytes-1) + `"`)
	if _, err := cekafka.Encode(big); err == nil {
		t.Fatal("Encode accepted a value Decode refuses")
	}
}

// TestEncodeRefusesWhatDecodeRefuses pins that Encode does not produce a
// message the other side would refuse.
func TestEncodeRefusesWhatDecodeRefuses(t *testing.T) {
	for name, mut := range map[string]func(*ce.Event){
		"no mode":      func(e *ce.Event) { e.Mode = 0 },
		"no id":        func(e *ce.Event) { e.ID = "" },
		"not JSON":     func(e *ce.Event) { e.Data = []byte("{") },
		"text content": func(e *ce.Event) { e.DataContentType = "text/plain" },
	} {
		ev := command(ce.ModeBinary)
		mut(&ev)
		if _, err := cekafka.Encode(ev); err == nil {
			t.Fatalf("%s: Encode accepted the event", name)
		}
	}
}

// TestThroughKafkaBroker produces both modes with a kafka-go Writer to a
// real Kafka-protocol broker (kfake), consumes them with a Reader and
// decodes them.
func TestThroughKafkaBroker(t *testing.T) {
	const topic = "agentgate.requests"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	defer cluster.Close()
	addrs := cluster.ListenAddrs()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer func() { _ = w.Close() }()
	var want []ce.Event
	var msgs []kafka.Message
	for i, mode := range []ce.Mode{ce.ModeBinary, ce.ModeStructured, ce.ModeBinary} {
		ev := command(mode)
		ev.ID = "req-" + string(rune('a'+i))
		msg, err := cekafka.Encode(ev)
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		want = append(want, ev)
		msgs = append(msgs, msg)
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("producing: %v", err)
	}

	// Same key, same partition: find it by hashing as the writer did.
	part := (&kafka.Hash{}).Balance(msgs[0], 0, 1, 2)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: part, MinBytes: 1, MaxBytes: 4 << 20, MaxWait: 200 * time.Millisecond})
	defer func() { _ = r.Close() }()
	for i := range want {
		msg, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("consuming message %d: %v", i, err)
		}
		got, err := cekafka.Decode(msg)
		if err != nil {
			t.Fatalf("decoding message %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("message %d through the broker:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
}

// Issue 11 item 9: a structured-mode event whose attributes, or the
// members of its data, repeat (exactly or in another case), or whose
// attribute is spelled in another case, is refused naming the member; the
// SDK would keep one of them and a proxy might read the other.
func TestIssue11_9_StructuredEnvelopeIsStrict(t *testing.T) {
	const head = `{"specversion":"1.0","id":"r1","source":"s","subject":"a1","datacontenttype":"application/json",`
	for _, tc := range []struct{ name, value, attr string }{
		{"repeated type", head + `"type":"qwed.agent.action.verify","type":"qwed.agent.suspend","data":{}}`, "type"},
		{"type in another case", head + `"type":"qwed.agent.action.verify","TYPE":"qwed.agent.suspend","data":{}}`, "TYPE"},
		{"repeated extension", head + `"type":"t","replyto":"a","ReplyTo":"b","data":{}}`, "ReplyTo"},
		{"the issue's example in the data", head + `"type":"t","data":{"action":{"type":"execute_sql","query":"DROP TABLE users","TYPE":"calculate"}}}`, "data.action.TYPE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := kafka.Message{Value: []byte(tc.value), Headers: []kafka.Header{{Key: "content-type", Value: []byte(cekafka.MediaStructured)}}}
			_, err := cekafka.Decode(msg)
			var e *ce.Error
			if !errors.As(err, &e) || !errors.Is(err, ce.ErrInvalid) || e.Attribute != tc.attr {
				t.Fatalf("Decode = %v, want ErrInvalid about %s", err, tc.attr)
			}
		})
	}
	ok := kafka.Message{Value: []byte(head + `"type":"t","xother":"1","data":{"action":{"type":"calculate"}}}`),
		Headers: []kafka.Header{{Key: "content-type", Value: []byte(cekafka.MediaStructured)}}}
	if _, err := cekafka.Decode(ok); err != nil {
		t.Fatalf("a strict event is refused: %v", err)
	}
}
