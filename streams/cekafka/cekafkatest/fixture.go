package cekafkatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/segmentio/kafka-go"
)

// Fixture is the JSON description of one Kafka message.
type Fixture struct {
	Description string   `json:"description"`
	Topic       string   `json:"topic"`
	Key         string   `json:"key"`
	Headers     []Header `json:"headers"`
	Value       string   `json:"value"`
}

// Header is one message header.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Message returns the message f describes (no key when Key is empty).
func (f Fixture) Message() kafka.Message {
	msg := kafka.Message{Topic: f.Topic, Value: []byte(f.Value)}
	if f.Key != "" {
		msg.Key = []byte(f.Key)
	}
	for _, h := range f.Headers {
		msg.Headers = append(msg.Headers, kafka.Header{Key: h.Key, Value: []byte(h.Value)})
	}
	return msg
}

// Describe returns the fixture of msg with the description desc.
func Describe(desc string, msg kafka.Message) Fixture {
	f := Fixture{Description: desc, Topic: msg.Topic, Key: string(msg.Key), Value: string(msg.Value)}
	for _, h := range msg.Headers {
		f.Headers = append(f.Headers, Header{Key: h.Key, Value: string(h.Value)})
	}
	return f
}

// Read reads the fixture in file, refusing unknown fields.
func Read(file string) (Fixture, error) {
	var f Fixture
	raw, err := os.ReadFile(file)
	if err != nil {
		return f, fmt.Errorf("reading fixture: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("parsing fixture %s: %w", file, err)
	}
	return f, nil
}

// Write writes f to file as indented JSON.
func Write(file string, f Fixture) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding fixture: %w", err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing fixture: %w", err)
	}
	return nil
}
