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
