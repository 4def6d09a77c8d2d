package strictjson

import (
	"reflect"
	"testing"
)

// BenchmarkCheckVerifyBody checks the body of the HTTP verify benchmark
// against a struct shape.
func BenchmarkCheckVerifyBody(b *testing.B) {
	s := ShapeOf(reflect.TypeFor[outer](), true)
	body := []byte(`{"type":"calculate","inner":{"name":"17+1","extra":{"conversation_id":"c3-0","step_number":18}},"agent_id":"a"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(body, s); err != nil {
			b.Fatal(err)
		}
	}
}
