package verify

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
)

// TestSeed002_8_3_CodeHTTPStatus pins the QWED protocol's error code
// registry (QWED protocol v1.0 §8.3) against CodeHTTPStatus, which reads
// the gate's one catalogue: a catalogue change that contradicts the
// registry fails here.
func TestSeed002_8_3_CodeHTTPStatus(t *testing.T) {
	registry := []struct {
		code   domain.Code
		status int
	}{
		{"QWED-REQ-001", 400}, {"QWED-REQ-002", 400}, {"QWED-REQ-003", 400}, {"QWED-REQ-004", 400},
		{"QWED-REQ-005", 400}, {"QWED-AUTH-001", 401}, {"QWED-AUTH-002", 401}, {"QWED-AUTH-003", 403},
		{"QWED-AUTH-004", 429}, {"QWED-ENG-001", 500}, {"QWED-ENG-002", 500}, {"QWED-ENG-003", 504},
		{"QWED-ENG-004", 500}, {"QWED-SEC-001", 403}, {"QWED-SEC-002", 403}, {"QWED-SEC-003", 403},
		{"QWED-SYS-001", 500}, {"QWED-SYS-002", 503},
	}
	for _, r := range registry {
		if !r.code.Known() {
			t.Errorf("%s is not in the catalogue", r.code)
		}
		if got := CodeHTTPStatus(r.code); got != r.status {
			t.Errorf("CodeHTTPStatus(%s) = %d, §8.3 says %d", r.code, got, r.status)
		}
	}
	// The gate's own codes keep the catalogue's status.
	for _, c := range []domain.Code{domain.CodeAgentNotRegistered, domain.CodeBudgetCost, domain.CodeRequiresApproval} {
		if got, want := CodeHTTPStatus(c), c.HTTPStatus(); got != want {
			t.Errorf("CodeHTTPStatus(%s) = %d, want the catalogue's %d", c, got, want)
		}
	}
}
