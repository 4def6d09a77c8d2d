package a2aproxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/a2a"
)

// FuzzProxyRequest holds the JSON-RPC decoder of the proxy: it never
// panics; what it accepts is one JSON object with no duplicate members, a
// send or stream method, a messageId and a sender within bounds, and
// 1 to MaxParts parts, each an object payload of a payload type; what it
// refuses has a JSON-RPC error code and an id that is a JSON-RPC id.
func FuzzProxyRequest(f *testing.F) {
	seeds := []string{
		send("1", "m-1", "procurement", `{"text":"Hello"}`),
		send(`"x"`, "m-2", "procurement", `{"text":"invoice"}`, financeBad),
		`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m","metadata":{"sender_agent_id":"a"},"parts":[{"kind":"data","data":[1]}]}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"SendMessage","params":{"message":{"message_id":"m","metadata":{"sender_agent_id":"a"},"parts":[{"data":"s"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"id":2}`,
		`[{"jsonrpc":"2.0"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`,
		send("1", "m", "s", `{"url":"https://example.com"}`),
		`{"a":{"b":{"c":[{"d":{}}]}}}`,
		``, `null`, `"x"`, `{} {}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := decodeRequest(body)
		if req == nil {
			t.Fatal("nil request")
		}
		if !validID(req.ID) || !json.Valid(req.ID) {
			t.Fatalf("id %q is not a JSON-RPC id", req.ID)
		}
		if e != nil {
			if e.Code >= 0 || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if err := checkJSON(body); err != nil || !json.Valid(body) {
			t.Fatalf("accepted a body that is not one clean JSON value: %v", err)
		}
		if !sendMethods[req.Method] && !streamMethods[req.Method] {
			t.Fatalf("accepted method %q", req.Method)
		}
		if req.MessageID == "" || len(req.MessageID) > MaxMessageIDBytes || req.Sender == "" {
			t.Fatalf("accepted messageId %q sender %q", req.MessageID, req.Sender)
		}
		if len(req.Parts) == 0 || len(req.Parts) > MaxParts {
			t.Fatalf("accepted %d parts", len(req.Parts))
		}
		for i, p := range req.Parts {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(p.Payload, &obj); err != nil || obj == nil {
				t.Fatalf("part %d payload %q is not an object", i, p.Payload)
			}
			if p.Type == "" || strings.TrimSpace(string(p.Type)) == "" {
				t.Fatalf("part %d has no payload type", i)
			}
			if p.Type != a2a.PayloadGeneral {
				if _, ok := obj["text"]; ok && len(obj) == 1 && string(p.Payload) == `{"text":`+string(obj["text"])+`}` {
					t.Fatalf("part %d: a text part was given type %s", i, p.Type)
				}
			}
		}
	})
}
