package reasoning

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

func run(t testing.TB, query, params string) (engines.Outcome, Result) {
	t.Helper()
	req := engines.Request{Query: query, Type: "reasoning"}
	if params != "" {
		req.Params = json.RawMessage(params)
	}
	o := New(nil).Verify(context.Background(), req)
	r, _ := o.Result.(Result)
	return o, r
}

// TestSeed002_4_1_ReasoningChains is the table of the reasoning engine:
// chains given as params.steps and as lines, the first wrong step, the
// first undecided step, and the refusals.
func TestSeed002_4_1_ReasoningChains(t *testing.T) {
	cases := []struct {
		name      string
		query     string
		params    string
		status    engines.Status
		code      string
		wrong     int // index of first_wrong_step (-1: none)
		undecided int // index of first_undecided_step (-1: none)
	}{
		{name: "all steps right (params)", query: "shopping", params: `{"steps":[{"claim":"3*4=12","engine":"math"},{"claim":"12+5=17"}]}`,
			status: engines.Verified, wrong: -1, undecided: -1},
		{name: "all steps right (lines)", query: "3*4 = 12\n12 + 5 = 17\n17/2 = 8.5", status: engines.Verified, wrong: -1, undecided: -1},
		{name: "labels are dropped", query: "Step 1: 3*4 = 12\nstep 2: 12+5 = 17\n3. 17*2 = 34\n4) 34-4 = 30", status: engines.Verified, wrong: -1, undecided: -1},
		{name: "a decimal is not a label", query: "1.5 + 1 = 2.5", status: engines.Verified, wrong: -1, undecided: -1},
		{name: "math prefix", query: "math: (x+1)^2 = x^2+2x+1", status: engines.Verified, wrong: -1, undecided: -1},
		{name: "second step wrong", query: "3*4 = 12\n12 + 5 = 18\n18 * 2 = 36", status: engines.Failed, wrong: 1, undecided: -1},
		{name: "wrong identity step", query: "(a+b)^2 = a^2 + b^2", status: engines.Failed, wrong: 0, undecided: -1},
		{name: "wrong step reported even after an undecided one", query: "sin(1) = 0.84\n2+2 = 5", status: engines.Failed, wrong: 1, undecided: 0},
		{name: "undecided step gives its status", query: "2+2 = 4\nsin(1) = 0.84", status: engines.Unsupported, code: "QWED-REQ-005", wrong: -1, undecided: 1},
		{name: "syntax error in a step", query: "2+2 = 4\n1/2(3+1) = 2", status: engines.Error, code: "QWED-REQ-003", wrong: -1, undecided: 1},
		{name: "step params are passed through", query: "x", params: `{"steps":[{"claim":"x^3","params":{"operation":"derivative","variable":"x"}}]}`,
			status: engines.Verified, wrong: -1, undecided: -1},
		{name: "step params are checked by the step engine", query: "x", params: `{"steps":[{"claim":"1=1","params":{"domain":"p-adic"}}]}`,
			status: engines.Error, code: "QWED-REQ-001", wrong: -1, undecided: 0},
		{name: "logic step without a logic engine", query: "logic: (AND (GT x 5))", status: engines.Unsupported, code: "QWED-ENG-004", wrong: -1, undecided: 0},
		{name: "unknown step engine", query: "x", params: `{"steps":[{"claim":"1=1","engine":"sql"}]}`, status: engines.Error, code: CodeInvalid, wrong: -1, undecided: -1},
		{name: "empty claim", query: "x", params: `{"steps":[{"claim":"  "}]}`, status: engines.Error, code: CodeInvalid, wrong: -1, undecided: -1},
		{name: "unknown params field", query: "x", params: `{"chain":[]}`, status: engines.Error, code: CodeInvalid, wrong: -1, undecided: -1},
		{name: "steps of the wrong type", query: "x", params: `{"steps":"3*4=12"}`, status: engines.Error, code: CodeInvalid, wrong: -1, undecided: -1},
		{name: "empty steps", query: "x", params: `{"steps":[]}`, status: engines.Error, code: CodeMissing, wrong: -1, undecided: -1},
		{name: "blank query", query: " \n \n", status: engines.Error, code: CodeMissing, wrong: -1, undecided: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, r := run(t, tc.query, tc.params)
			if o.Status != tc.status {
				t.Fatalf("status %s, want %s (%+v %+v)", o.Status, tc.status, o.Err, o.Result)
			}
			if tc.code != "" && (o.Err == nil || o.Err.Code != tc.code) {
				t.Fatalf("error %+v, want %s", o.Err, tc.code)
			}
			if tc.code == "" && o.Err != nil {
				t.Fatalf("unexpected error %+v", o.Err)
			}
			if o.Result == nil {
				if tc.wrong >= 0 || tc.undecided >= 0 {
					t.Fatalf("no result")
				}
				return
			}
			if r.IsValid != (o.Status == engines.Verified) || r.StepsTotal != len(r.Steps) {
				t.Fatalf("result %+v", r)
			}
			if got := stepIndex(r.FirstWrongStep); got != tc.wrong {
				t.Errorf("first wrong step %d, want %d", got, tc.wrong)
			}
			if got := stepIndex(r.FirstUndecidedStep); got != tc.undecided {
				t.Errorf("first undecided step %d, want %d", got, tc.undecided)
			}
			if tc.undecided >= 0 && tc.wrong < 0 && o.Err.Details["step"] != tc.undecided {
				t.Errorf("error details %v lack step %d", o.Err.Details, tc.undecided)
			}
		})
	}
}

func stepIndex(s *StepResult) int {
	if s == nil {
		return -1
	}
	return s.Index
}

// TestSeed002_6_3_2_FirstWrongStepCarriesTheEngineOutcome pins what the
// first wrong step reports: index, claim, engine and the math engine's
// result with the correct value.
func TestSeed002_6_3_2_FirstWrongStepCarriesTheEngineOutcome(t *testing.T) {
	o, r := run(t, "3*4 = 12\n12 + 5 = 18", "")
	w := r.FirstWrongStep
	if o.Status != engines.Failed || w == nil || w.Index != 1 || w.Claim != "12 + 5 = 18" || w.Engine != "math" ||
		w.Status != engines.Corrected || w.Corrected != "12 + 5 = 17" {
		t.Fatalf("first wrong step %+v", w)
	}
	b, err := json.Marshal(w.Result)
	if err != nil || !strings.Contains(string(b), `"expected":"17"`) || !strings.Contains(string(b), `"actual":"18"`) {
		t.Fatalf("step result %s %v", b, err)
	}
	if r.StepsVerified != 1 || r.StepsTotal != 2 {
		t.Fatalf("counts %+v", r)
	}
}

// TestDesign2_7_MaxStepsBothSides pins MaxSteps for lines and params.
func TestDesign2_7_MaxStepsBothSides(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("1+1 = 2\n", n) }
	if o, _ := run(t, lines(MaxSteps), ""); o.Status != engines.Verified {
		t.Fatalf("%d steps: %s %+v", MaxSteps, o.Status, o.Err)
	}
	if o, _ := run(t, lines(MaxSteps+1), ""); o.Status != engines.Error || o.Err.Code != CodeTooLarge {
		t.Fatalf("%d steps: %s %+v", MaxSteps+1, o.Status, o.Err)
	}
	steps := func(n int) string {
		return `{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"claim":"2*2=4"},`, n), ",") + `]}`
	}
	if o, _ := run(t, "x", steps(MaxSteps)); o.Status != engines.Verified {
		t.Fatalf("%d param steps: %s %+v", MaxSteps, o.Status, o.Err)
	}
	if o, _ := run(t, "x", steps(MaxSteps+1)); o.Status != engines.Error || o.Err.Code != CodeTooLarge {
		t.Fatalf("%d param steps: %s %+v", MaxSteps+1, o.Status, o.Err)
	}
	if o, _ := run(t, strings.Repeat(" ", engines.MaxQueryBytes+1), ""); o.Status != engines.Error || o.Err.Code != CodeTooLarge {
		t.Fatalf("long query: %s %+v", o.Status, o.Err)
	}
}

// TestSeed002_8_3_CancelledChainIsTimeout pins that a cancelled context
// stops the chain: the unchecked steps are TIMEOUT, and so is the chain.
func TestSeed002_8_3_CancelledChainIsTimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := New(nil).Verify(ctx, engines.Request{Query: "1+1 = 2\n2+2 = 4"})
	if o.Status != engines.Timeout || o.Err.Code != CodeTimeout {
		t.Fatalf("outcome %s %+v", o.Status, o.Err)
	}
}

// TestSeed002_6_1_ReasoningDeterminism pins byte-identical outcomes.
func TestSeed002_6_1_ReasoningDeterminism(t *testing.T) {
	req := engines.Request{Query: "3*4 = 12\n(x+1)^2 = x^2+1\nsin(1)=0\nlogic: (GT x 1)", IncludeProof: true}
	a, _ := json.Marshal(New(nil).Verify(context.Background(), req))
	b, _ := json.Marshal(New(nil).Verify(context.Background(), req))
	if string(a) != string(b) || len(a) < 100 {
		t.Fatalf("not deterministic:\n%s\n%s", a, b)
	}
}

// TestSeed002_4_2_ReasoningCapabilities pins the capabilities document.
func TestSeed002_4_2_ReasoningCapabilities(t *testing.T) {
	c := New(nil).Capabilities()
	if c.EngineID != "reasoning" || c.Limits["max_steps"] != MaxSteps {
		t.Fatalf("capabilities %+v", c)
	}
	if got := c.Capabilities["step_engines"].([]string); len(got) != 1 {
		t.Fatalf("without logic the step engines are %v", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Params, &schema); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseSteps pins that no query or params make the engine panic, that
// every outcome is well formed and encodes deterministically.
func FuzzParseSteps(f *testing.F) {
	f.Add("3*4 = 12\n12+5 = 17", "")
	f.Add("Step 1: 1/2(3+1)\n2) x^2 = x*x\nlogic: (AND)", "")
	f.Add("x", `{"steps":[{"claim":"2+2=5","engine":"math","params":{"correct":false}}]}`)
	f.Fuzz(func(t *testing.T, q, params string) {
		req := engines.Request{Query: q}
		if params != "" {
			req.Params = json.RawMessage(params)
		}
		o := New(nil).Verify(context.Background(), req)
		switch o.Status {
		case engines.Verified, engines.Failed:
			if o.Err != nil {
				t.Fatalf("%q: %s with error %+v", q, o.Status, o.Err)
			}
		default:
			if o.Err == nil {
				t.Fatalf("%q: %s without error", q, o.Status)
			}
		}
		a, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(New(nil).Verify(context.Background(), req))
		if string(a) != string(b) {
			t.Fatalf("%q: not deterministic", q)
		}
	})
}

// BenchmarkVerify_Chain is a typical three-step arithmetic chain; it
// reports p50 and p99 of the per-op durations.
func BenchmarkVerify_Chain(b *testing.B) {
	e := New(nil)
	req := engines.Request{Query: "Step 1: 3*4 = 12\nStep 2: 12 + 5 = 17\nStep 3: 17/2 = 8.5"}
	if o := e.Verify(context.Background(), req); o.Status != engines.Verified {
		b.Fatalf("%s %+v", o.Status, o.Err)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		e.Verify(context.Background(), req)
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[(len(durs)*99)/100].Nanoseconds()), "p99-ns")
}
