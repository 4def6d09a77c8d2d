package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// QWED-Agent spec v1.1 §7.1 from the Go client: ReportExecution sends the
// action's output, which the gate scans: a card number in it flags the
// execution (pii_violation) and the reply holds the output's hash and
// findings, never the card; an output with an address only is logged
// unflagged; an output over the limit is QWED-REQ-004.
func TestAgentSpec_7_1_GoClientReportsExecutionOutput(t *testing.T) {
	ctx := context.Background()
	g := startGate(t, nil)
	acme := g.principal(t, "org_acme")
	agent, _ := register(t, acme, "org_acme", "reporter",
		domain.Permissions{AllowedEngines: []string{"math"}}, domain.Limits{MaxDailyCost: usd(t, "1.00"), MaxRequestsPerHour: 100})
	approve := func(q string) string {
		t.Helper()
		d, err := agent.VerifyAction(ctx, domain.Action{Type: "calculate", Query: q}, nil)
		if err != nil || d.Decision != domain.Approved {
			t.Fatalf("VerifyAction %s: %+v %v", q, d, err)
		}
		return d.ActionID
	}

	out := "charged 4111 1111 1111 1111 for order 7"
	sum := sha256.Sum256([]byte(out))
	id := approve("1+1")
	_, err := agent.ReportExecution(ctx, client.ExecutionReport{LogExecution: domain.LogExecution{ActionID: id, Success: true},
		Output: strings.Repeat("b", domain.MaxOutputBytes+1)})
	wantCode(t, "an output over the limit", err, 400, domain.CodeTooLong)

	ex, err := agent.ReportExecution(ctx, client.ExecutionReport{LogExecution: domain.LogExecution{ActionID: id, Success: true}, Output: out})
	if err != nil || !ex.Logged || !ex.PIIViolation || len(ex.OutputFindings) == 0 || ex.ResultHash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("ReportExecution with a card in the output: %+v %v; want logged, flagged, the output's hash", ex, err)
	}
	for _, f := range ex.OutputFindings {
		if strings.Contains(f.Location+f.Kind, "4111") {
			t.Fatalf("a finding holds the card: %+v", f)
		}
	}
	clean, err := agent.ReportExecution(ctx, client.ExecutionReport{LogExecution: domain.LogExecution{ActionID: approve("2+2"), Success: true},
		Output: "sent to ann@example.com"})
	if err != nil || !clean.Logged || clean.PIIViolation {
		t.Fatalf("ReportExecution with an address: %+v %v; want logged unflagged", clean, err)
	}
	// LogExecution sends no output: nothing is scanned.
	plain, err := agent.LogExecution(ctx, domain.LogExecution{ActionID: approve("3+3"), Success: true})
	if err != nil || !plain.Logged || plain.PIIViolation || len(plain.OutputFindings) != 0 || plain.ResultHash != "" {
		t.Fatalf("LogExecution: %+v %v", plain, err)
	}
}
