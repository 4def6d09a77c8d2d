package kafkagate_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/client"
)

// TestQWEDProtocol_5_2_1_MathCalculus_Kafka: a qwed.verify CloudEvent with
// the math engine's solve, limit and integrate operations (QWED protocol
// v1.0 §5.2.1) is answered on Kafka as POST /verify answers it.
func TestQWEDProtocol_5_2_1_MathCalculus_Kafka(t *testing.T) {
	_, brokers := broker(t)
	startGate(t, brokers, &logs{brokers: brokers}, t.TempDir(), withEngines(engines(t)))
	c := newClient(t, brokers)
	for i, tc := range []struct {
		query  string
		params map[string]any
		status string
		field  string
		want   string
	}{
		{"2*x**3 - 3*x**2 - 11*x + 6 = 0", map[string]any{"operation": "solve"}, "VERIFIED", "solutions", `["-2","1/2","3"]`},
		{"(x**2-4)/(x-2) = 5", map[string]any{"operation": "limit", "point": 2}, "FAILED", "expected", `"4"`},
		{"x**3", map[string]any{"operation": "integrate", "lower": 0, "upper": 2, "precision": 2}, "VERIFIED", "decimal", `"4.00"`},
	} {
		cmd := client.QWEDVerify(adminKey, map[string]any{"query": tc.query, "type": "math", "params": tc.params})
		cmd.ID = "qv-calc-" + string(rune('a'+i))
		rep, err := c.Request(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Status string                     `json:"status"`
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(rep.Data, &r); err != nil || rep.Status != 200 || r.Status != tc.status {
			t.Fatalf("%s: %d %s", tc.query, rep.Status, rep.Data)
		}
		if got := r.Result[tc.field]; !slices.Equal(got, []byte(tc.want)) {
			t.Errorf("%s: result.%s = %s, want %s", tc.query, tc.field, got, tc.want)
		}
	}
}
