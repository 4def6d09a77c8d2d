package domain

import (
	"encoding/json"
	"testing"
)

// BenchmarkDetectTool measures the guards a tool call gets under
// Config.StrictGuards (detectTool): a call of an ordinary tool with a
// URL, a path and a few other parameters, which every check passes.
func BenchmarkDetectTool(b *testing.B) {
	a := &Agent{}
	s := NewState()
	s.Config = DefaultConfig()
	params := json.RawMessage(`{"url":"https://api.example.com/v1/items?page=2","path":"/srv/data/q1.csv","limit":50,"filters":{"status":"open","owner":"ann"}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var cl classification
		if detectTool(&cl, s, a, "export_items", params) {
			b.Fatal(cl.deny)
		}
	}
}
