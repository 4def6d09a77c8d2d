package gatetest

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// PrincipalToolsBody is a body of PUT /principals/{id}/tools: one
// low-risk tool.
const PrincipalToolsBody = `{"tools":[{"name":"run_report","risk_level":"low"}]}`

// PrincipalWriteRateLimit checks the edge limit on principal-scoped
// writes, set to one write a second and burst writes at once per API key:
// keyA (of principal a) sets its path policy burst times (200), then the
// next policy, tool registry and key rotation of keyA are answered
// QWED-AUTH-004 (429) with Retry-After and recorded() (the events
// recorded so far) does not move; keyB (of principal b) is not held
// back; once advance has given a token back, keyA writes again.
func PrincipalWriteRateLimit(t *testing.T, h HTTP, keyA, a, keyB, b string, burst int, recorded func() int, advance func(time.Duration)) {
	t.Helper()
	for i := range burst {
		body := `{"allowed_paths":["/srv/` + strconv.Itoa(i) + `"]}`
		if r := h(t, "PUT", "/principals/"+a+"/permissions", Key(keyA), body); r.Status != http.StatusOK {
			t.Fatalf("write %d of the burst: %d %s", i+1, r.Status, r.Body)
		}
	}
	before := recorded()
	for _, w := range []struct{ method, path, body string }{
		{"PUT", "/principals/" + a + "/permissions", `{"allowed_paths":["/over"]}`},
		{"PUT", "/principals/" + a + "/tools", PrincipalToolsBody},
		{"POST", "/principals/" + a + "/keys/k_nope/rotate", ""},
		{"DELETE", "/principals/" + a + "/keys/k_nope", ""},
	} {
		r := h(t, w.method, w.path, Key(keyA), w.body)
		if r.Status != http.StatusTooManyRequests || r.ErrorCode() != "QWED-AUTH-004" || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("%s %s over the limit: %d %v %s", w.method, w.path, r.Status, r.Header, r.Body)
		}
	}
	if got := recorded(); got != before {
		t.Fatalf("rate-limited writes were recorded: %d events, then %d", before, got)
	}
	if r := h(t, "PUT", "/principals/"+b+"/tools", Key(keyB), PrincipalToolsBody); r.Status != http.StatusOK {
		t.Fatalf("another key: %d %s", r.Status, r.Body)
	}
	advance(time.Second)
	if r := h(t, "PUT", "/principals/"+a+"/tools", Key(keyA), PrincipalToolsBody); r.Status != http.StatusOK {
		t.Fatalf("once a token is back: %d %s", r.Status, r.Body)
	}
}
