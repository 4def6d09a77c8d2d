package httpapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// TestIssue11_8_FieldLimitsBothSides: a field at its limit is decided, one
// byte over it is refused with 400 QWED-REQ-004 naming the field and the
// limit, recorded as a rejection that holds neither the body nor the field.
func TestIssue11_8_FieldLimitsBothSides(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 3, nil)
	verify := "/agents/" + a.id + "/verify"
	const marker = "FIELD-LIMIT-MARKER"
	conv := func(n int) string { return marker + strings.Repeat("c", n-len(marker)) }
	if r := g.do("POST", verify, bearerH(a.token), verifyReq("calculate", "1+1", conv(domain.MaxIDBytes), 1)); r.status != 200 {
		t.Fatalf("conversation_id of %d bytes: %d %s", domain.MaxIDBytes, r.status, r.body)
	}
	for _, tc := range []struct {
		name, path string
		h          hdr
		body       any
		field      string
		max        int
	}{
		{"conversation_id", verify, bearerH(a.token), verifyReq("calculate", "1+1", conv(domain.MaxIDBytes+1), 1), "context.conversation_id", domain.MaxIDBytes},
		{"query", verify, bearerH(a.token), verifyReq("calculate", marker+strings.Repeat("1", domain.MaxQueryBytes), "c", 1), "action.query", domain.MaxQueryBytes},
		{"description", "/agents/register", apiKey(key), map[string]any{"agent": map[string]any{"name": "bot", "type": "autonomous", "principal_id": "org_a",
			"description": marker + strings.Repeat("d", domain.MaxTextBytes)}}, "agent.description", domain.MaxTextBytes},
		{"action_id", "/agents/" + a.id + "/executions", bearerH(a.token),
			`{"action_id":"` + conv(domain.MaxIDBytes+1) + `","success":true}`, "action_id", domain.MaxIDBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := g.head()
			r := g.do("POST", tc.path, tc.h, tc.body)
			if r.status != 400 {
				t.Fatalf("status %d %.300s, want 400", r.status, r.body)
			}
			e := errorOf(t, r.body)
			if e.Code != domain.CodeTooLong || e.Details["field"] != tc.field || e.Details["max_bytes"] != float64(tc.max) {
				t.Fatalf("error %+v, want QWED-REQ-004 on %s (max %d)", e, tc.field, tc.max)
			}
			g.expectRejected(before, domain.CodeTooLong, marker)
		})
	}
}

// TestIssue11_8_ActivityPagesByBytes: activities whose JSON passes the
// page's byte budget are paged by it, whatever the count limit, and every
// activity is read exactly once by following next_after_seq.
func TestIssue11_8_ActivityPagesByBytes(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 3, nil)
	note := strings.Repeat("n", 60_000)
	const n = 24 // 24 × 60 kB > 1 MiB
	for step := 1; step <= n; step++ {
		body := verifyReq("calculate", strconv.Itoa(step)+"+1", "c", step)
		body["action"].(map[string]any)["parameters"] = map[string]any{"note": note}
		if r := g.do("POST", "/agents/"+a.id+"/verify", bearerH(a.token), body); r.status >= 300 {
			t.Fatalf("step %d: %d %.300s", step, r.status, r.body)
		}
	}
	seen := map[float64]bool{}
	pages, after := 0, ""
	for {
		r := g.do("GET", "/agents/"+a.id+"/activity?limit=1000"+after, apiKey(key), nil)
		if r.status != 200 || len(r.body) > projections.MaxPageBytes+4096 {
			t.Fatalf("page %d: %d, %d bytes", pages, r.status, len(r.body))
		}
		pages++
		m := r.json(t)
		for _, x := range m["activities"].([]any) {
			seq := x.(map[string]any)["seq"].(float64)
			if seen[seq] {
				t.Fatalf("activity %v read twice", seq)
			}
			seen[seq] = true
		}
		next, ok := m["next_after_seq"].(float64)
		if !ok {
			break
		}
		after = "&after_seq=" + strconv.FormatUint(uint64(next), 10)
	}
	if len(seen) != n || pages < 2 {
		t.Fatalf("read %d activities in %d pages, want %d in at least 2", len(seen), pages, n)
	}
}

// TestIssue11_8_ApprovalsPage: GET /approvals pages with limit and the
// after cursor (next_after), every approval once, and refuses an after
// longer than an id.
func TestIssue11_8_ApprovalsPage(t *testing.T) {
	g := newTestGate(t, gateOptions{})
	key := g.issueKey("org_a")
	a := g.register(key, "org_a", 1, nil)
	want := map[string]bool{}
	for step := 1; step <= 5; step++ {
		r := g.do("POST", "/agents/"+a.id+"/tools/send_email", bearerH(a.token),
			fmt.Sprintf(`{"tool_call":{"parameters":{"n":%d}},"context":{"conversation_id":"c","step_number":%d}}`, step, step))
		if r.status != 202 {
			t.Fatalf("tool call: %d %s", r.status, r.body)
		}
		want[r.json(t)["approval"].(map[string]any)["approval_id"].(string)] = true
	}
	got, after, pages := map[string]bool{}, "", 0
	for {
		r := g.do("GET", "/approvals?limit=2"+after, apiKey(key), nil)
		if r.status != 200 {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		pages++
		m := r.json(t)
		for _, x := range m["approvals"].([]any) {
			id := x.(map[string]any)["approval_id"].(string)
			if got[id] {
				t.Fatalf("approval %s listed twice", id)
			}
			got[id] = true
		}
		next, ok := m["next_after"].(string)
		if !ok {
			break
		}
		after = "&after=" + url.QueryEscape(next)
	}
	if len(got) != len(want) || pages != 3 {
		t.Fatalf("listed %v in %d pages, want %v in 3", got, pages, want)
	}
	if r := g.do("GET", "/approvals?after="+strings.Repeat("a", MaxPathIDBytes+1), apiKey(key), nil); r.status != 400 {
		t.Fatalf("a long after: %d %s", r.status, r.body)
	}
}
