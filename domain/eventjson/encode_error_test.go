package eventjson_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// TestAppendErrorMatchesMarshal pins AppendError to json.Marshal's bytes
// for the errors the gate records (budget details, nested and dynamic
// values, characters that need escaping), for values only the fallback
// writes, and to json.Marshal's failure, leaving dst as it was.
func TestAppendErrorMatchesMarshal(t *testing.T) {
	reset := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for i, x := range []*domain.Error{
		nil,
		{Code: domain.CodeInvalidRequest, Message: "bad"},
		{Code: "BUDGET-001", Message: "daily cost limit <exceeded> & \u2028", Details: map[string]any{
			"limit": domain.USD(100_000_000), "current": domain.USD(99_990_000), "reset_at": reset,
			"window": "daily", "count": int64(3), "ratio": 0.25, "ok": true, "none": nil,
		}},
		{Code: "LOOP-003", Message: "x", Details: map[string]any{
			"fingerprints": []string{"a", "b"}, "nested": map[string]any{"z": []any{1, "two", json.Number("3")}},
			"raw": json.RawMessage(`{ "b" : 1 }`), "at": &reset,
		}},
		{Code: "X", Message: "invalid \xff utf-8", Details: map[string]any{}},
		// Only json.Marshal writes these.
		{Code: "X", Message: "m", Details: map[string]any{"risk": domain.Risk("high"), "f32": float32(1.5)}},
	} {
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatalf("%d: json.Marshal: %v", i, err)
		}
		got, err := eventjson.AppendError([]byte("prefix"), x)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%d: AppendError = %s, %v\nwant prefix%s", i, got, err, want)
		}
	}
	bad := &domain.Error{Code: "X", Details: map[string]any{"nan": math.NaN()}}
	_, want := json.Marshal(bad)
	got, err := eventjson.AppendError([]byte("keep"), bad)
	if err == nil || want == nil || err.Error() != want.Error() || string(got) != "keep" {
		t.Fatalf("AppendError of a NaN detail = %q, %v; want json.Marshal's error %v and dst unchanged", got, err, want)
	}
}
