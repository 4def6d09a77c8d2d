package domain

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Issue 17 item 9: the catalogue, and docs/errors.md rendered from it, is
// in code order: by family, then by number.
func TestCatalogueInCodeOrder(t *testing.T) {
	families := []string{"AGENT", "AGENT-CTX", "AGENT-LOOP", "AGENT-BUDGET", "AGENT-TRUST", "A2A", "EXEC", "POLICY", "REQ", "AUTH", "ENG", "SEC", "SYS"}
	key := func(c Code) [2]int {
		rest := strings.TrimPrefix(string(c), "QWED-")
		i := strings.LastIndexByte(rest, '-')
		n, err := strconv.Atoi(rest[i+1:])
		f := slices.Index(families, rest[:i])
		if err != nil || f < 0 {
			t.Fatalf("code %s is in no family of %v", c, families)
		}
		return [2]int{f, n}
	}
	for i := 1; i < len(Catalogue); i++ {
		a, b := key(Catalogue[i-1].Code), key(Catalogue[i].Code)
		if a[0] > b[0] || a[0] == b[0] && a[1] >= b[1] {
			t.Errorf("%s is listed before %s", Catalogue[i-1].Code, Catalogue[i].Code)
		}
	}
}

// Issue 17 item 9: an answer's error always has details ({} when there
// are none), in a refusal's body and in a decision's reply, while the
// event keeps its bytes (details omitted when empty).
func TestReplyErrorsAlwaysHaveDetails(t *testing.T) {
	e := Errorf(CodeRepetitiveLoop, "loop")
	_, body := Reply(&Event{Type: EvActionDecided, Decided: &ActionDecided{Decision: Denied, Error: e}})
	got, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"error":{"code":"QWED-AGENT-LOOP-003","message":"loop","details":{}}`) {
		t.Errorf("decision reply %s: error without details", got)
	}
	_, body = Reply(&Event{Type: EvCommandRejected, Error: &Error{Code: CodeNotFound, Message: "m", Details: map[string]any{"field": "x"}}})
	if got, _ = json.Marshal(body); string(got) != `{"error":{"code":"QWED-REQ-404","message":"m","details":{"field":"x"}}}` {
		t.Errorf("rejection reply %s", got)
	}
	if ev, _ := json.Marshal(e); string(ev) != `{"code":"QWED-AGENT-LOOP-003","message":"loop"}` {
		t.Errorf("an event's error changed its bytes: %s", ev)
	}
}
