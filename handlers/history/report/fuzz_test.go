package report_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentgate/agentgate/handlers/history/report"
)

// FuzzVerifyBundle: a bundle is untrusted input. Reading and verifying any
// bytes never panics, and a bundle that verifies has no problem. testdata/fuzz/FuzzVerifyBundle/bundle is a real bundle (a
// day of the seeded history of report_test.go).
func FuzzVerifyBundle(f *testing.F) {
	f.Add([]byte(`{"format":"agentgate.compliance-bundle.v2","partition":0,"tree":{"size":1,"root":"00","head":"00","head_proof":[],"signature":""},` +
		`"checkpoint":null,"events":[{"seq":1,"event":"{}","proof":[]}],"report":{},"jwks":{"keys":[]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bd, err := report.ReadBundle(bytes.NewReader(data))
		if err != nil {
			return
		}
		chk, err := report.VerifyBundle(context.Background(), bd, report.VerifyOptions{})
		if err != nil {
			return
		}
		if chk.OK() && len(chk.Problems) != 0 {
			t.Fatalf("OK with a break or problems: %+v", chk)
		}
	})
}
