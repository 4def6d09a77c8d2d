package a2a

import (
	"strings"
	"testing"
	"unicode"
)

// The seed's curl to /a2a/intercept ("HTTP Gateway") decodes as is.
func TestDecode_SeedGeneralMessage(t *testing.T) {
	m, p := Decode([]byte(`{
  "sender_agent_id": "agent-A",
  "receiver_agent_id": "agent-B",
  "payload_type": "general",
  "payload": {"message": "Hello!"}
}`), 0)
	if p != nil {
		t.Fatalf("Decode: %v", p)
	}
	if m.SenderAgentID != "agent-A" || m.ReceiverAgentID != "agent-B" || m.PayloadType != PayloadGeneral ||
		string(m.Payload) != `{"message": "Hello!"}` || m.Timestamp != "" || m.TraceID != "" {
		t.Fatalf("Decode = %+v", m)
	}
}

func TestDecode_DefaultsAndOptionals(t *testing.T) {
	m, p := Decode([]byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{},"timestamp":"2026-03-26T00:00:00.5+01:00","trace_id":"demo_001"}`), 0)
	if p != nil {
		t.Fatalf("Decode: %v", p)
	}
	if m.PayloadType != PayloadGeneral || m.Timestamp != "2026-03-26T00:00:00.5+01:00" || m.TraceID != "demo_001" {
		t.Fatalf("Decode = %+v", m)
	}
	m, p = Decode([]byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{},"timestamp":null,"trace_id":null}`), 0)
	if p != nil || m.Timestamp != "" || m.TraceID != "" {
		t.Fatalf("Decode with nulls = %+v, %v", m, p)
	}
}

// Every member wrong in every way is refused with its code and a message
// naming it.
func TestDecode_Refusals(t *testing.T) {
	const ok = `"sender_agent_id":"a","receiver_agent_id":"b"`
	long := strings.Repeat("é", MaxAgentIDChars+1)
	for _, tc := range []struct {
		name, body      string
		code, field, in string
	}{
		{"empty", "  ", CodeInvalidRequest, "", "empty"},
		{"not an object", `[1]`, CodeInvalidRequest, "", "JSON object"},
		{"malformed", `{"sender_agent_id":`, CodeInvalidRequest, "", "malformed JSON at offset"},
		{"trailing data", `{` + ok + `,"payload":{}} x`, CodeInvalidRequest, "", "malformed JSON"},
		{"unknown member", `{` + ok + `,"payload":{},"metadata":{}}`, CodeInvalidRequest, "metadata", "unknown member"},
		{"wrong case", `{` + ok + `,"Payload":{}}`, CodeInvalidRequest, "Payload", "not spelled"},
		{"repeated member", `{` + ok + `,"payload":{},"payload":{}}`, CodeInvalidRequest, "payload", "twice"},
		{"repeated in payload", `{` + ok + `,"payload":{"a":1,"a":2}}`, CodeInvalidRequest, "payload.a", "twice"},
		{"missing sender", `{"receiver_agent_id":"b","payload":{}}`, CodeMissingField, "sender_agent_id", "missing"},
		{"missing receiver", `{"sender_agent_id":"a","payload":{}}`, CodeMissingField, "receiver_agent_id", "missing"},
		{"missing payload", `{` + ok + `}`, CodeMissingField, "payload", "missing"},
		{"sender a number", `{"sender_agent_id":7,"receiver_agent_id":"b","payload":{}}`, CodeInvalidRequest, "sender_agent_id", "must be a string, not a number"},
		{"sender null", `{"sender_agent_id":null,"receiver_agent_id":"b","payload":{}}`, CodeInvalidRequest, "sender_agent_id", "not null"},
		{"sender empty", `{"sender_agent_id":"","receiver_agent_id":"b","payload":{}}`, CodeInvalidRequest, "sender_agent_id", "not empty"},
		{"sender too long", `{"sender_agent_id":"` + long + `","receiver_agent_id":"b","payload":{}}`, CodeTooLong, "sender_agent_id", "257 characters"},
		{"sender control", `{"sender_agent_id":"a\u0007","receiver_agent_id":"b","payload":{}}`, CodeInvalidRequest, "sender_agent_id", "control character"},
		{"receiver newline", `{"sender_agent_id":"a","receiver_agent_id":"b\n","payload":{}}`, CodeInvalidRequest, "receiver_agent_id", "control character"},
		{"receiver bidi override", `{"sender_agent_id":"a","receiver_agent_id":"b\u202e","payload":{}}`, CodeInvalidRequest, "receiver_agent_id", "control character"},
		{"receiver C1", `{"sender_agent_id":"a","receiver_agent_id":"b\u0085","payload":{}}`, CodeInvalidRequest, "receiver_agent_id", "control character"},
		{"sender lone surrogate", `{"sender_agent_id":"a\ud800","receiver_agent_id":"b","payload":{}}`, CodeInvalidRequest, "sender_agent_id", "U+FFFD"},
		{"sender invalid UTF-8", "{\"sender_agent_id\":\"a\xff\",\"receiver_agent_id\":\"b\",\"payload\":{}}", CodeInvalidRequest, "sender_agent_id", "UTF-8"},
		{"payload type unknown", `{` + ok + `,"payload_type":"sql","payload":{}}`, CodeUnsupportedType, "payload_type", `"sql" is not one of`},
		{"payload type empty", `{` + ok + `,"payload_type":"","payload":{}}`, CodeMissingField, "payload_type", "empty"},
		{"payload type a number", `{` + ok + `,"payload_type":1,"payload":{}}`, CodeInvalidRequest, "payload_type", "must be a string"},
		{"payload type null", `{` + ok + `,"payload_type":null,"payload":{}}`, CodeInvalidRequest, "payload_type", "not null"},
		{"payload an array", `{` + ok + `,"payload":[1]}`, CodeInvalidRequest, "payload", "must be a JSON object, not an array"},
		{"payload a string", `{` + ok + `,"payload":"x"}`, CodeInvalidRequest, "payload", "not a string"},
		{"payload null", `{` + ok + `,"payload":null}`, CodeInvalidRequest, "payload", "not null"},
		{"payload 1e400", `{` + ok + `,"payload":{"amount":1e400}}`, CodeInvalidRequest, "payload", "1e400"},
		{"payload lone surrogate", `{` + ok + `,"payload":{"x":"\udc00"}}`, CodeInvalidRequest, "payload", "unpaired surrogate"},
		{"payload too deep", `{` + ok + `,"payload":` + strings.Repeat(`{"a":`, MaxPayloadDepth+1) + `1` + strings.Repeat(`}`, MaxPayloadDepth+1) + `}`, CodeTooLong, "payload", "nests deeper"},
		{"timestamp not RFC 3339", `{` + ok + `,"payload":{},"timestamp":"26/03/2026"}`, CodeInvalidRequest, "timestamp", "RFC 3339"},
		{"timestamp empty", `{` + ok + `,"payload":{},"timestamp":""}`, CodeInvalidRequest, "timestamp", "empty"},
		{"timestamp a number", `{` + ok + `,"payload":{},"timestamp":1711411200}`, CodeInvalidRequest, "timestamp", "must be a string"},
		{"timestamp too long", `{` + ok + `,"payload":{},"timestamp":"` + strings.Repeat("9", 65) + `"}`, CodeTooLong, "timestamp", "65 bytes"},
		{"trace id with space", `{` + ok + `,"payload":{},"trace_id":"a b"}`, CodeInvalidRequest, "trace_id", "printable ASCII"},
		{"trace id non-ASCII", `{` + ok + `,"payload":{},"trace_id":"é"}`, CodeInvalidRequest, "trace_id", "0xc3"},
		{"trace id too long", `{` + ok + `,"payload":{},"trace_id":"` + strings.Repeat("t", 129) + `"}`, CodeTooLong, "trace_id", "129 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, p := Decode([]byte(tc.body), 0)
			if p == nil {
				t.Fatalf("Decode accepted %s as %+v", tc.body, m)
			}
			if m != nil {
				t.Errorf("Decode returned a message with its problem")
			}
			if p.Code != tc.code || p.Field != tc.field || !strings.Contains(p.Message, tc.in) {
				t.Errorf("problem = %+v, want code %s field %q message containing %q", p, tc.code, tc.field, tc.in)
			}
		})
	}
}

// The payload bound is the configured one; the message may be at most
// MaxEnvelopeBytes longer.
func TestDecode_PayloadBound(t *testing.T) {
	pad := strings.Repeat("x", 100)
	body := []byte(`{"sender_agent_id":"a","receiver_agent_id":"b","payload":{"p":"` + pad + `"}}`)
	payloadLen := len(`{"p":"` + pad + `"}`)
	if _, p := Decode(body, payloadLen); p != nil {
		t.Fatalf("Decode at the bound: %v", p)
	}
	_, p := Decode(body, payloadLen-1)
	if p == nil || p.Code != CodeTooLong || p.Field != "payload" || p.Limit != payloadLen-1 || p.Size != payloadLen {
		t.Fatalf("Decode over the bound: %+v", p)
	}
	huge := make([]byte, 16+MaxEnvelopeBytes+1)
	_, p = Decode(huge, 16)
	if p == nil || p.Code != CodeTooLong || p.Field != "" || p.Size != len(huge) {
		t.Fatalf("Decode of an oversized message: %+v", p)
	}
	if d := p.Details(); d["limit"] != 16+MaxEnvelopeBytes || d["size"] != len(huge) {
		t.Fatalf("Details = %v", d)
	}
}

// 256 characters of any script are one agent id; the bound counts
// characters, not bytes.
func TestValidate_AgentIDCharacters(t *testing.T) {
	m := &Message{SenderAgentID: strings.Repeat("é", MaxAgentIDChars), ReceiverAgentID: "b", PayloadType: PayloadGeneral, Payload: []byte(`{}`)}
	if p := Validate(m, 0); p != nil {
		t.Fatalf("Validate: %v", p)
	}
	m.SenderAgentID = "emoji 🤖 agent"
	if p := Validate(m, 0); p != nil {
		t.Fatalf("Validate: %v", p)
	}
	m.PayloadType = ""
	if p := Validate(m, 0); p == nil || p.Code != CodeMissingField {
		t.Fatalf("Validate of an empty payload_type: %+v", p)
	}
	m.PayloadType = PayloadCode
	m.Payload = nil
	if p := Validate(m, 0); p == nil || p.Code != CodeMissingField || p.Field != "payload" {
		t.Fatalf("Validate of no payload: %+v", p)
	}
}

func TestProblem_Details(t *testing.T) {
	_, p := Decode([]byte(`{"sender_agent_id":`), 0)
	if p == nil || p.Offset != 19 || p.Details()["offset"] != 19 {
		t.Fatalf("syntax problem = %+v", p)
	}
	if p.Error() != p.Message {
		t.Fatalf("Error() = %q", p.Error())
	}
	_, p = Decode([]byte(`{"sender_agent_id":1}`), 0)
	if d := p.Details(); len(d) != 1 || d["field"] != "sender_agent_id" {
		t.Fatalf("Details = %v", d)
	}
}

// TestIsControlMatchesUnicode pins isControl's ASCII shortcut against the
// category tables, on every code point below U+3000 and on the planes'
// format characters.
func TestIsControlMatchesUnicode(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		if got, want := isControl(r), unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r); got != want {
			t.Fatalf("isControl(%U) = %v, want %v", r, got, want)
		}
	}
	for _, r := range []rune{0xFEFF, 0xFFF9, 0x110BD, 0xE0001, 0xE007F, 0x10FFFF} {
		if got, want := isControl(r), unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r); got != want {
			t.Fatalf("isControl(%U) = %v, want %v", r, got, want)
		}
	}
}
