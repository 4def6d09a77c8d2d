package command

import "testing"

// BenchmarkDecodeVerify measures the decoding of the body of
// BenchmarkHTTPVerify's requests (the strict check and the fast path).
func BenchmarkDecodeVerify(b *testing.B) {
	body := []byte(`{"action":{"type":"calculate","query":"17+1"},"context":{"conversation_id":"c3-0","step_number":18}}`)
	b.ReportAllocs()
	for b.Loop() {
		in := Input{Body: body, AgentID: "agent_1"}
		if _, e := decodeVerify(&in, &Credentials{}); e != nil {
			b.Fatal(e.Err.Message)
		}
	}
}

// BenchmarkValidateVerify measures a full schema validation of the body
// of BenchmarkHTTPVerify's requests (validateBody): what checkBody saves
// where the decoder checks everything the schema asserts.
func BenchmarkValidateVerify(b *testing.B) {
	body := []byte(`{"action":{"type":"calculate","query":"17+1"},"context":{"conversation_id":"c3-0","step_number":18}}`)
	s := bodySchemas()[VerifyAction.body].schema
	b.ReportAllocs()
	for b.Loop() {
		if e := validateBody(s, body); e != nil {
			b.Fatal(e.Err.Message)
		}
	}
}

// BenchmarkCheckBodyVerify measures what the server adds to a verify
// request for its schema (checkBody: the decoder checks all the schema
// asserts, so no second parse).
func BenchmarkCheckBodyVerify(b *testing.B) {
	defer serverValidation()()
	body := []byte(`{"action":{"type":"calculate","query":"17+1"},"context":{"conversation_id":"c3-0","step_number":18}}`)
	bodySchemas()
	b.ReportAllocs()
	for b.Loop() {
		if e := checkBody(VerifyAction.body, body); e != nil {
			b.Fatal(e.Err.Message)
		}
	}
}
