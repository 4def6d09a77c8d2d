package cekafka_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/agentgate/agentgate/streams/ce"
	"github.com/agentgate/agentgate/streams/cekafka"
)

// fuzzMessage builds a message from fuzzer bytes: headers are "name=value"
// lines.
func fuzzMessage(key []byte, headers string, value []byte) kafka.Message {
	msg := kafka.Message{Key: key, Value: value}
	for line := range bytes.SplitSeq([]byte(headers), []byte("\n")) {
		name, v, _ := bytes.Cut(line, []byte("="))
		msg.Headers = append(msg.Headers, kafka.Header{Key: string(name), Value: v})
	}
	return msg
}

// FuzzDecode pins that Decode never panics, answers only *ce.Error, and
// that whatever it accepts encodes and decodes back to the same event.
func FuzzDecode(f *testing.F) {
	for _, fx := range kafkaFixtures {
		msg, err := cekafka.Encode(fx.want)
		if err != nil {
			f.Fatalf("encoding seed: %v", err)
		}
		var hs []byte
		for i, h := range msg.Headers {
			if i > 0 {
				hs = append(hs, '\n')
			}
			hs = append(hs, h.Key...)
			hs = append(hs, '=')
			hs = append(hs, h.Value...)
		}
		f.Add(msg.Key, string(hs), msg.Value)
	}
	f.Add([]byte(nil), "content-type=application/cloudevents+json", []byte(`{"specversion":"1.0","id":"x","source":"s","type":"t","data_base64":""}`))
	f.Add([]byte("k"), "ce_specversion=1.0\nce_id=1\nce_source=s\nce_type=t\nce_time=2026-13-01\ncontent-type=application/json", []byte(`{}`))
	f.Fuzz(func(t *testing.T, key []byte, headers string, value []byte) {
		msg := fuzzMessage(key, headers, value)
		ev, err := cekafka.Decode(msg)
		if err != nil {
			var cerr *ce.Error
			if !errors.As(err, &cerr) || !(errors.Is(err, ce.ErrInvalid) || errors.Is(err, ce.ErrTooLarge)) {
				t.Fatalf("Decode error %v is not a *ce.Error of a known kind", err)
			}
			return
		}
		again, err := cekafka.Encode(ev)
		if err != nil {
			t.Fatalf("Encode refused an event Decode accepted: %v (%+v)", err, ev)
		}
		back, err := cekafka.Decode(again)
		if err != nil {
			t.Fatalf("decoding the re-encoded event: %v", err)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("re-encoding changed the event:\n got %+v\nwant %+v", back, ev)
		}
	})
}
