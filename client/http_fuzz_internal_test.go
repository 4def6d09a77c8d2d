package client

import (
	"net/http"
	"testing"
)

// FuzzAnswerDecoding feeds the decoders of the gate's answers arbitrary
// statuses, bodies and Retry-After values: no panic, a refusal always has
// a code and its status, a wait is never negative nor past the cap, and a
// body is a result only when its member is a non-empty string.
func FuzzAnswerDecoding(f *testing.F) {
	f.Add(429, []byte(`{"error":{"code":"QWED-AUTH-004","message":"slow down","details":{}}}`), "1", 0)
	f.Add(429, []byte(`{"decision":"BUDGET_EXCEEDED","error":{"code":"QWED-AGENT-BUDGET-001"}}`), "", 1)
	f.Add(503, []byte(`<html>bad gateway</html>`), "Wed, 21 Oct 2015 07:28:00 GMT", 3)
	f.Add(403, []byte(`{"decision":"","error":null}`), "-5", 40)
	f.Add(200, []byte(`{"status":"rate_limited"}`), "999999999999999999999", 2)
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string, attempt int) {
		status = 100 + abs(status)%500
		attempt = abs(attempt) % 64
		r := &response{status: status, header: http.Header{"Retry-After": {retryAfter}}, body: body, requestID: "k"}
		if status >= 400 {
			e := r.apiError()
			if e.Status != status || e.Code == "" || e.RequestID != "k" || e.RetryAfter < 0 {
				t.Fatalf("refusal %+v of %d %q", e, status, body)
			}
		}
		_ = retryable(r)
		if d, ok := retryWait(retryAfter, attempt); ok && (d < 0 || d > maxRetryWait) {
			t.Fatalf("retryWait(%q, %d) = %v", retryAfter, attempt, d)
		}
		for _, member := range []string{"decision", "status", "specversion"} {
			if isResult(body, member) && len(body) < len(member)+6 {
				t.Fatalf("%q is a result by %s", body, member)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the smallest int
			return 0
		}
		return -n
	}
	return n
}

// TestRetryable pins which answers are retried: transient refusals and
// pages that are not the gate's, never a result at a transient status
// (retrying it with its key would only replay it).
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   bool
	}{
		{429, `{"error":{"code":"QWED-AUTH-004","message":"m","details":{}}}`, true},
		{429, `{"decision":"BUDGET_EXCEEDED","error":{"code":"QWED-AGENT-BUDGET-001"}}`, false},
		{429, `{"status":"rate_limited","reason":"r","engine_used":"rate_limiter","retry_after_ms":900}`, false},
		{429, `{"status":"ERROR","verified":false,"error":{"code":"QWED-AUTH-004"}}`, true},
		{504, `{"status":"TIMEOUT","verified":false,"engine":"logic"}`, false},
		{504, `{"error":{"code":"QWED-ENG-003","message":"m","details":{}}}`, true},
		{503, `{"error":{"code":"QWED-SYS-002","message":"m","details":{}}}`, true},
		{502, `<html>bad gateway</html>`, true},
		{408, ``, true},
		{403, `{"specversion":"1.0","data":{"error":{"code":"QWED-AGENT-004"}}}`, false},
		{400, `{"error":{"code":"QWED-REQ-001","message":"m","details":{}}}`, false},
		{500, `{"error":{"code":"QWED-SYS-001","message":"m","details":{}}}`, false},
		{200, `{"decision":"APPROVED"}`, false},
	} {
		if got := retryable(&response{status: c.status, body: []byte(c.body)}); got != c.want {
			t.Errorf("retryable(%d %s) = %v, want %v", c.status, c.body, got, c.want)
		}
	}
	if !retryable(nil) {
		t.Error("a connection error is not retried")
	}
}
