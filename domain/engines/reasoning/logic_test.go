package reasoning_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/logic"
	"github.com/agentgate/agentgate/domain/engines/reasoning"
	"github.com/agentgate/agentgate/handlers/verify/z3pool"
)

// TestSeed002_4_1_ReasoningWithTheRealLogicEngine checks chains mixing
// math and logic steps through the real logic engine on a real z3 pool
// (skipped when z3 is not installed).
func TestSeed002_4_1_ReasoningWithTheRealLogicEngine(t *testing.T) {
	if _, err := exec.LookPath("z3"); err != nil {
		t.Skip("z3 not installed (apt-get install -y z3)")
	}
	pool, err := z3pool.New(z3pool.Config{Size: 1})
	if err != nil {
		t.Fatalf("starting z3: %v", err)
	}
	defer pool.Close()
	e := reasoning.New(logic.New(pool))
	if got := e.Capabilities().Capabilities["step_engines"].([]string); len(got) != 2 {
		t.Fatalf("step engines %v", got)
	}
	for _, tc := range []struct {
		name   string
		query  string
		params string
		status engines.Status
		wrong  int
	}{
		{name: "math then satisfiable logic", query: "3*4 = 12\nlogic: (AND (GT x 5) (LT x 10))", status: engines.Verified, wrong: -1},
		{name: "logic step as param", query: "chain", params: `{"steps":[{"claim":"2^10 = 1024"},{"claim":"(AND (GT x 5) (LT y 10))","engine":"logic","params":{"format":"dsl"}}]}`,
			status: engines.Verified, wrong: -1},
		{name: "math step wrong after logic", query: "logic: (GT x 1)\n2+2 = 5", status: engines.Failed, wrong: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := engines.Request{Query: tc.query}
			if tc.params != "" {
				req.Params = json.RawMessage(tc.params)
			}
			o := e.Verify(context.Background(), req)
			if o.Status != tc.status {
				t.Fatalf("status %s, want %s: %+v %+v", o.Status, tc.status, o.Err, o.Result)
			}
			r := o.Result.(reasoning.Result)
			got := -1
			if r.FirstWrongStep != nil {
				got = r.FirstWrongStep.Index
			}
			if got != tc.wrong {
				t.Fatalf("first wrong step %d, want %d", got, tc.wrong)
			}
			for _, s := range r.Steps {
				if s.Engine == "logic" && s.Status != engines.Verified {
					t.Fatalf("logic step %+v", s)
				}
			}
		})
	}
	// An unsatisfiable logic step is not verified: whatever the logic
	// engine answers for it, the chain is not VERIFIED.
	o := e.Verify(context.Background(), engines.Request{Query: "1+1 = 2\nlogic: (AND (GT x 5) (LT x 3))"})
	if o.Status == engines.Verified {
		t.Fatalf("an unsatisfiable step verified the chain: %+v", o.Result)
	}
	t.Logf("unsatisfiable logic step: %s", o.Status)
}
