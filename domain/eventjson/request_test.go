package eventjson_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// verifyBody is the body the HTTP endpoint and the CloudEvent decode
// (handlers/httpapi's verifyBody).
type verifyBody struct {
	domain.VerifyAction
	AgentID    string `json:"agent_id,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
}

// strictDecode decodes p as the endpoint's general path does: a
// json.Decoder refusing unknown members, and nothing but white space after
// the value.
func strictDecode(p []byte) (verifyBody, bool) {
	var b verifyBody
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, false
	}
	return b, len(bytes.TrimLeft(p[dec.InputOffset():], " \t\r\n")) == 0
}

// fastDecode is DecodeVerifyRequest into a verifyBody.
func fastDecode(p []byte) (verifyBody, bool) {
	var b verifyBody
	var ok bool
	b.AgentID, b.AgentToken, ok = eventjson.DecodeVerifyRequest(p, &b.VerifyAction)
	return b, ok
}

var verifyBodies = []string{
	`{"action":{"type":"calculate","query":"2+2"},"context":{"conversation_id":"c1","step_number":1}}`,
	` {"action":{"type":"execute_sql","query":"SELECT 1","target":"db","parameters":{"b":1, "a":[true,null]},"estimated_cost_usd":0.25,"estimated_tokens":150},` +
		`"context":{"conversation_id":"c\u00e9","step_number":12,"user_intent":"x <y> & z","pre_action_state_hash":"` + "ab" + `","state_source":"db"},` +
		`"options":{"require_attestation":true,"risk_threshold":"high"},"agent_id":"agent_1","agent_token":"qwed_t"}` + "\n",
	`{"context":{"step_number":2},"action":{"type":"calculate"}}`,
	`{"action":{"type":"calculate","code":"print(1)"},"context":{"conversation_id":"c","step_number":1.5}}`,
	`{}`,
}

// TestDecodeVerifyRequestMatchesStrictDecoder: on the bodies clients send,
// the fast path decodes and agrees with the strict general decoder; on
// bodies the general decoder refuses (unknown members at any depth,
// trailing data, bad values) or that only it decodes exactly (keys in
// another case, repeated keys, null members, quoted numbers), the fast path
// declines.
func TestDecodeVerifyRequestMatchesStrictDecoder(t *testing.T) {
	for _, body := range verifyBodies {
		want, wok := strictDecode([]byte(body))
		got, gok := fastDecode([]byte(body))
		if !wok || !gok {
			t.Fatalf("%s: strict ok %v, fast ok %v; want both", body, wok, gok)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nfast   %+v\nstrict %+v", body, got, want)
		}
	}
	for _, body := range []string{
		`{"action":{"type":"calculate","extra":1},"context":{"step_number":1}}`,
		`{"action":{"type":"calculate"},"context":{"step_number":1},"unknown":true}`,
		`{"action":{"type":"calculate"},"options":{"nope":1}}`,
		`{"action":{"type":"calculate"}} {}`,
		`{"action":{"type":"calculate"}`,
		`{"Action":{"type":"calculate"}}`,
		`{"action":{"Type":"calculate"}}`,
		`{"action":{"type":"a"},"action":{"type":"b"}}`,
		`{"action":null}`,
		`{"context":{"step_number":"1"}}`,
		`{"action":{"estimated_tokens":1.5}}`,
		`{"action":{"type":1}}`,
		`[]`,
		``,
		`null`,
	} {
		if got, ok := fastDecode([]byte(body)); ok {
			want, wok := strictDecode([]byte(body))
			if !wok || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the fast path decoded %+v; strict: %+v, %v", body, got, want, wok)
			}
		}
	}
}

// FuzzDecodeVerifyRequestMatchesStrictDecoder: whenever the fast path
// decodes a body, the strict general decoder decodes it too, to the same
// members.
func FuzzDecodeVerifyRequestMatchesStrictDecoder(f *testing.F) {
	for _, b := range verifyBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, ok := fastDecode(p)
		if !ok {
			return
		}
		want, wok := strictDecode(p)
		if !wok {
			t.Fatalf("%q: the fast path decoded %+v, the strict decoder refuses it", p, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nfast   %+v\nstrict %+v", p, got, want)
		}
	})
}
