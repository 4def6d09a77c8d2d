package kafkagate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// recordedLen is the length the event codec records a payload at, for
// payloads of every character it escapes (<, >, &, U+2028, U+2029) and of
// others it does not: what the payload adds to its encoded event.
func TestRecordedLen(t *testing.T) {
	eventOf := func(p string) int {
		t.Helper()
		ev := &domain.Event{Seq: 1, Type: domain.EvCommandRejected, Time: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC),
			Command: &domain.Command{Type: domain.CmdA2AMessage, Request: domain.RequestID{Source: "http", ID: "r"}, Principal: "org",
				A2A: &a2a.Message{SenderAgentID: "s", ReceiverAgentID: "r", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(p)}},
			Error: &domain.Error{Code: domain.CodeTooLong, Message: "x"}}
		b, err := eventjson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	empty := eventOf(`{}`)
	for _, p := range []string{
		`{"m":"plain"}`, `{"m":"<b>&amp;</b>"}`, `{"m":"a\u2028b\u2029c"}`, "{\"m\":\"a\u2028b\u2029c\"}",
		`{"m":"é ü 中 🙂"}`, `{"<":">","&":[1,2,"<<>>&&"]}`, "{\"m\":\"\xe2\x80\xa7\xe2\x80\xaa\"}",
	} {
		if got, want := recordedLen([]byte(p)), eventOf(p)-empty+len(`{}`); got != want {
			t.Errorf("recordedLen(%q) = %d, the event records %d", p, got, want)
		}
	}
}
