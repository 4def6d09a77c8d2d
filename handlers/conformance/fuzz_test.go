package conformance

import (
	"testing"
)

// FuzzJudge feeds arbitrary answers (status code and body, from a server
// the runner does not trust) to every judge of every vector: no panic,
// and an answer judged acceptable is valid JSON of a 2xx-5xx status.
func FuzzJudge(f *testing.F) {
	f.Add(200, []byte(`{"status":"VERIFIED","verified":true,"engine":"math","metadata":{"protocol_version":"1.0.0"}}`))
	f.Add(400, []byte(`{"status":"ERROR","verified":false,"error":{"code":"QWED-REQ-003","message":"m","details":{"position":1,"expected":"x","found":"y"}}}`))
	f.Add(200, []byte(`{"batch":true,"status":"completed","summary":{"total":3},"items":[{"status":"VERIFIED","verified":true},{},3]}`))
	f.Add(200, []byte(`{"engines":[{"engine_id":"math","capabilities":{"a":1},"input_types":[1]}]}`))
	f.Add(200, []byte(`[{"engine_id":null}]`))
	f.Add(403, []byte(`{"status":"BLOCKED","verified":false,"result":[],"error":{"details":[]}}`))
	f.Add(200, []byte(`not json`))
	vs := Vectors()
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		a := answer{status: status, body: body}
		r := &runner{}
		for _, v := range vs {
			sent, err := v.body()
			if err != nil {
				t.Fatal(err)
			}
			_, judged := r.judge(v, sent, a)
			if judged == nil && (status < 200 || status > 599) {
				t.Fatalf("%s accepted HTTP %d", v.ID, status)
			}
		}
	})
}
