package eventjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// TestAppendErrorMatchesMarshal pins AppendError to the oracle's bytes
// (json.Marshal) for the errors the gate records (budget details, nested
// and dynamic values, characters that need escaping), and to an
// *EncodeError, dst left as it was, for details holding a value that is
// not a detail value (which json.Marshal writes, or refuses).
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
			"raw": json.RawMessage(`{ "b" : 1 }`), "at": &reset, "typed": domain.Details{"a": uint8(1)},
			"findings": []engines.Finding{{Rule: "r", Severity: "high", Message: "m", Line: 2}},
		}},
		{Code: "X", Message: "invalid \xff utf-8", Details: map[string]any{}},
	} {
		want, err := json.Marshal(x)
		if err != nil {
			t.Fatalf("%d: json.Marshal: %v", i, err)
		}
		got, err := eventjson.AppendError([]byte("prefix"), x)
		if err != nil || !eventjson.OracleEqual(got, append([]byte("prefix"), want...)) {
			t.Errorf("%d: AppendError = %s, %v\nwant prefix%s", i, got, err, want)
		}
	}
	for _, bad := range []domain.Details{
		{"nan": math.NaN()},
		{"risk": domain.Risk("high")},
		{"f32": float32(1.5)},
		{"nested": []any{map[string]any{"x": struct{}{}}}},
		{"raw": json.RawMessage(`{"a":}`)},
		{"number": json.Number("1.")},
	} {
		got, err := eventjson.AppendError([]byte("keep"), &domain.Error{Code: "X", Details: bad})
		var encErr *eventjson.EncodeError
		if !errors.As(err, &encErr) || string(got) != "keep" {
			t.Errorf("AppendError of %v = %q, %v; want an *EncodeError and dst unchanged", bad, got, err)
		}
	}
}
