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
