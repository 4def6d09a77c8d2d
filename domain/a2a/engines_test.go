package a2a

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// seedFinancial is the seed's Quick Start payload (QWED A2A "Quick
// Start"): 50.00 × 2 + 25.00 × 2 = 150.00.
func seedFinancial(claimed string) []byte {
	return []byte(`{
  "data": {
    "claimed_total": ` + claimed + `,
    "line_items": [
      {"description": "Widget A", "amount": 50.00, "quantity": 2},
      {"description": "Widget B", "amount": 25.00, "quantity": 2}
    ]
  }
}`)
}

// Engines, finance_guard: the seed's 150.00 is forwarded.
func TestEngines_FinanceForwarded(t *testing.T) {
	r := FinanceGuard(seedFinancial("150.00"))
	if r.Blocked || r.Code != "" || r.Problem != nil || r.Engine != EngineFinance {
		t.Fatalf("FinanceGuard = %+v", r)
	}
	if r.ClaimedTotal != "150.00" || r.ComputedTotal != "150.00" || r.Reason != "Financial totals verified" {
		t.Fatalf("FinanceGuard = %+v", r)
	}
}

// Engines, finance_guard: the seed's 999.99 is blocked with its exact
// message.
func TestEngines_FinanceHallucinationBlocked(t *testing.T) {
	r := FinanceGuard(seedFinancial("999.99"))
	want := "Mathematical hallucination detected: claimed_total=999.99, computed_total=150.00"
	if !r.Blocked || r.Code != CodeFinanceMismatch || r.Reason != want || r.Problem != nil {
		t.Fatalf("FinanceGuard = %+v, want blocked with %q", r, want)
	}
	if r.ClaimedTotal != "999.99" || r.ComputedTotal != "150.00" {
		t.Fatalf("totals = %q, %q", r.ClaimedTotal, r.ComputedTotal)
	}
}

// Decimal arithmetic, ROUND_HALF_UP to 0.01, a one-cent tolerance, never
// floats.
func TestEngines_FinanceArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name, payload     string
		blocked           bool
		claimed, computed string
	}{
		// 0.1 + 0.2 is 0.3 exactly (a float sum is 0.30000000000000004).
		{"no float", `{"data":{"claimed_total":0.3,"line_items":[{"amount":0.1},{"amount":0.2}]}}`, false, "0.30", "0.30"},
		{"half up", `{"data":{"claimed_total":"0.01","line_items":[{"amount":"0.005"}]}}`, false, "0.01", "0.01"},
		{"negative zero", `{"data":{"claimed_total":-0.001,"line_items":[{"amount":"-0.004"}]}}`, false, "0.00", "0.00"},
		{"half up negative", `{"data":{"claimed_total":-0.01,"line_items":[{"amount":-0.005}]}}`, false, "-0.01", "-0.01"},
		{"quantity default 1", `{"data":{"claimed_total":12.5,"line_items":[{"amount":12.5}]}}`, false, "12.50", "12.50"},
		{"amount default 0", `{"data":{"claimed_total":0,"line_items":[{"quantity":3}]}}`, false, "0.00", "0.00"},
		{"decimal quantity", `{"data":{"claimed_total":3.75,"line_items":[{"amount":2.5,"quantity":1.5}]}}`, false, "3.75", "3.75"},
		{"exponent", `{"data":{"claimed_total":1.5E2,"line_items":[{"amount":15e1}]}}`, false, "150.00", "150.00"},
		{"within one cent", `{"data":{"claimed_total":10.01,"line_items":[{"amount":10}]}}`, false, "10.01", "10.00"},
		{"over one cent", `{"data":{"claimed_total":10.02,"line_items":[{"amount":10}]}}`, true, "10.02", "10.00"},
		{"credit line", `{"data":{"claimed_total":90,"line_items":[{"amount":100},{"amount":-10,"description":"discount"}]}}`, false, "90.00", "90.00"},
		{"long coefficient", `{"data":{"claimed_total":"123456789012345.00","line_items":[{"amount":"123456789012344.999999999999999999"}]}}`, false, "123456789012345.00", "123456789012345.00"},
		{"big product", `{"data":{"claimed_total":1,"line_items":[{"amount":"999999999999999.999999999999999999","quantity":"999999999.999999999999999999"}]}}`, true, "1.00", "1000000000000000000000000.00"},
		// The int64 sum overflows at the first item and continues in apd.
		{"past int64", `{"data":{"claimed_total":1,"line_items":[{"amount":1e14,"quantity":99999999},{"amount":"0.005"},{"amount":0.000000000000000001,"quantity":0.000000000000000001}]}}`, true, "1.00", "9999999900000000000000.01"},
		// Scales that cannot be aligned in an int64 (10^-36).
		{"fine scales", `{"data":{"claimed_total":0,"line_items":[{"amount":5,"quantity":3},{"amount":0.000000000000000001,"quantity":0.000000000000000001}]}}`, true, "0.00", "15.00"},
		{"other members ignored", `{"note":[1,{"x":null}],"data":{"currency":"EUR","claimed_total":1,"line_items":[{"amount":1,"sku":{"a":[true,false]}}]}}`, false, "1.00", "1.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := FinanceGuard([]byte(tc.payload))
			if r.Problem != nil || r.Blocked != tc.blocked || r.ClaimedTotal != tc.claimed || r.ComputedTotal != tc.computed {
				t.Fatalf("FinanceGuard = %+v, want blocked %v, %s vs %s", r, tc.blocked, tc.claimed, tc.computed)
			}
			checkFinanceCheck(t, []byte(tc.payload), r)
		})
	}
}

// A payload without a claim is forwarded, as in QWED A2A.
func TestEngines_FinanceNoClaim(t *testing.T) {
	for _, payload := range []string{
		`{}`, `{"data":null}`, `{"data":{}}`, `{"data":{"claimed_total":5}}`,
		`{"data":{"claimed_total":null,"line_items":[{"amount":1}]}}`,
		`{"data":{"claimed_total":5,"line_items":[]}}`, `{"data":{"claimed_total":5,"line_items":null}}`,
	} {
		r := FinanceGuard([]byte(payload))
		if r.Blocked || r.Problem != nil || r.Reason != "No verifiable financial claims in payload" || r.ComputedTotal != "" {
			t.Errorf("FinanceGuard(%s) = %+v", payload, r)
		}
	}
}

// Every number wrong in every way is an input problem, blocked with its
// code and the member named: never a panic, never forwarded.
func TestEngines_FinanceRefusals(t *testing.T) {
	item := func(member string) string {
		return `{"data":{"claimed_total":1,"line_items":[{"amount":1},{` + member + `}]}}`
	}
	for _, tc := range []struct {
		name, payload, code, field, in string
	}{
		{"NaN string", item(`"amount":"NaN"`), CodeInvalidRequest, "payload.data.line_items[1].amount", `not the string "NaN"`},
		{"NaN token", item(`"amount":NaN`), CodeInvalidRequest, "payload.data.line_items[1].amount", "NaN and Infinity"},
		{"Infinity", item(`"amount":Infinity`), CodeInvalidRequest, "payload.data.line_items[1].amount", "NaN and Infinity"},
		{"-Infinity", item(`"amount":-Infinity`), CodeInvalidRequest, "payload.data.line_items[1].amount", ""},
		{"1e400", item(`"amount":1e400`), CodeInvalidRequest, "payload.data.line_items[1].amount", "out of range"},
		{"1e-400", item(`"amount":1e-400`), CodeInvalidRequest, "payload.data.line_items[1].amount", "decimal places"},
		{"huge exponent", item(`"amount":1e99999999999999999999`), CodeInvalidRequest, "payload.data.line_items[1].amount", "out of range"},
		{"10^15", item(`"amount":1000000000000000`), CodeInvalidRequest, "payload.data.line_items[1].amount", "10^15"},
		{"19 places", item(`"amount":0.0000000000000000001`), CodeInvalidRequest, "payload.data.line_items[1].amount", "18 decimal places"},
		{"number text too long", item(`"amount":"0.` + strings.Repeat("0", 63) + `"`), CodeTooLong, "payload.data.line_items[1].amount", "65 bytes"},
		{"not a number", item(`"amount":"abc"`), CodeInvalidRequest, "payload.data.line_items[1].amount", "decimal number"},
		{"string with space", item(`"amount":" 1"`), CodeInvalidRequest, "payload.data.line_items[1].amount", "decimal number"},
		{"boolean", item(`"amount":true`), CodeInvalidRequest, "payload.data.line_items[1].amount", "not a boolean"},
		{"null amount", item(`"amount":null`), CodeInvalidRequest, "payload.data.line_items[1].amount", "not null"},
		{"object amount", item(`"amount":{}`), CodeInvalidRequest, "payload.data.line_items[1].amount", "not an object"},
		{"negative quantity", item(`"amount":1,"quantity":-2`), CodeInvalidRequest, "payload.data.line_items[1].quantity", "negative"},
		{"quantity 10^9", item(`"quantity":1e9`), CodeInvalidRequest, "payload.data.line_items[1].quantity", "10^9"},
		{"repeated amount", item(`"amount":1,"amount":2`), CodeInvalidRequest, "payload.data.line_items[1].amount", "repeats"},
		{"item not an object", `{"data":{"claimed_total":1,"line_items":[1]}}`, CodeInvalidRequest, "payload.data.line_items[0]", "must be an object"},
		{"items not an array", `{"data":{"claimed_total":1,"line_items":{}}}`, CodeInvalidRequest, "payload.data.line_items", "must be an array"},
		{"data not an object", `{"data":[]}`, CodeInvalidRequest, "payload.data", "must be an object"},
		{"claimed NaN", `{"data":{"claimed_total":"NaN","line_items":[]}}`, CodeInvalidRequest, "payload.data.claimed_total", "decimal number"},
		{"claimed 1e400", `{"data":{"claimed_total":1e400,"line_items":[]}}`, CodeInvalidRequest, "payload.data.claimed_total", "out of range"},
		{"repeated data", `{"data":{},"data":{}}`, CodeInvalidRequest, "payload.data", "repeats"},
		{"repeated claim", `{"data":{"claimed_total":1,"claimed_total":2}}`, CodeInvalidRequest, "payload.data.claimed_total", "repeats"},
		{"escaped name repeats", `{"data":{"claimed_total":1,"claimed\u005ftotal":2}}`, CodeInvalidRequest, "payload.data.claimed_total", "repeats"},
		{"payload not an object", `[]`, CodeInvalidRequest, "payload", "must be an object"},
		{"malformed", `{"data":{"claimed_total":1,}}`, CodeInvalidRequest, "payload.data", "not valid JSON"},
		{"trailing data", `{} {}`, CodeInvalidRequest, "payload", "not valid JSON"},
		{"too deep", `{"x":` + strings.Repeat("[", MaxPayloadDepth) + strings.Repeat("]", MaxPayloadDepth) + `}`, CodeTooLong, "payload", "nests deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := FinanceGuard([]byte(tc.payload))
			if r.Problem == nil || !r.Blocked || r.Code != tc.code || r.Problem.Code != tc.code || r.Problem.Field != tc.field ||
				!strings.Contains(r.Problem.Message, tc.in) || !strings.HasPrefix(r.Reason, "finance_guard: ") {
				t.Fatalf("FinanceGuard(%s) = %+v (problem %+v), want %s at %s containing %q", tc.payload, r, r.Problem, tc.code, tc.field, tc.in)
			}
		})
	}
}

// 10^6 line items are refused at the first item past MaxLineItems,
// without reading the rest.
func TestEngines_FinanceTooManyItems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"data":{"claimed_total":1000000,"line_items":[`)
	for i := range 1_000_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"amount":1}`)
	}
	b.WriteString(`]}}`)
	r := FinanceGuard([]byte(b.String()))
	if r.Problem == nil || r.Code != CodeTooLong || r.Problem.Limit != MaxLineItems || r.Problem.Field != "payload.data.line_items" {
		t.Fatalf("FinanceGuard of 10^6 items = %+v", r)
	}
	// MaxLineItems items exactly are read.
	b.Reset()
	b.WriteString(`{"data":{"claimed_total":10000,"line_items":[`)
	for i := range MaxLineItems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"amount":1}`)
	}
	b.WriteString(`]}}`)
	if r := FinanceGuard([]byte(b.String())); r.Blocked || r.ComputedTotal != "10000.00" {
		t.Fatalf("FinanceGuard of MaxLineItems items = %+v", r)
	}
}

// Engines, logic_guard: the seed's contradiction, the claims sorted and
// written as Python writes a list.
func TestEngines_LogicContradiction(t *testing.T) {
	r := LogicGuard([]byte(`{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved","negated":true}]}`))
	want := "Logical contradiction detected: claims both asserted and negated: ['budget_approved']"
	if !r.Blocked || r.Code != CodeLogicContradiction || r.Reason != want || !slices.Equal(r.Contradictions, []string{"budget_approved"}) {
		t.Fatalf("LogicGuard = %+v, want %q", r, want)
	}
	r = LogicGuard([]byte(`{"assertions":[{"claim":"z","negated":true},{"claim":"it's","negated":true},{"claim":"a"},{"claim":"z","negated":false},{"claim":"it's"},{"claim":"a","negated":true},{"claim":"z"},{"claim":"ok"}]}`))
	want = `Logical contradiction detected: claims both asserted and negated: ['a', "it's", 'z']`
	if r.Reason != want || !slices.Equal(r.Contradictions, []string{"a", "it's", "z"}) {
		t.Fatalf("LogicGuard = %+v, want %q", r, want)
	}
}

func TestEngines_LogicForwarded(t *testing.T) {
	for payload, reason := range map[string]string{
		`{"assertions":[{"claim":"\ufffd \ud83d\ude00 \u00e9"}]}`: "No contradictions found in assertions",
		`{}`:                  "No assertions to verify",
		`{"assertions":null}`: "No assertions to verify",
		`{"assertions":[]}`:   "No assertions to verify",
		`{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved is false"}]}`: "No contradictions found in assertions",
		`{"assertions":[{"claim":"a","negated":true},{"claim":"b"}],"dsl":"(AND a b)"}`:     "No contradictions found in assertions",
	} {
		if r := LogicGuard([]byte(payload)); r.Blocked || r.Problem != nil || r.Reason != reason {
			t.Errorf("LogicGuard(%s) = %+v", payload, r)
		}
	}
}

func TestEngines_LogicRefusals(t *testing.T) {
	for _, tc := range []struct{ payload, code, field, in string }{
		{`{"assertions":{}}`, CodeInvalidRequest, "payload.assertions", "must be an array"},
		{`{"assertions":["a"]}`, CodeInvalidRequest, "payload.assertions[0]", "must be an object"},
		{`{"assertions":[{"claim":1}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "must be a string"},
		{`{"assertions":[{"claim":"a","negated":"yes"}]}`, CodeInvalidRequest, "payload.assertions[0].negated", "must be a boolean"},
		{`{"assertions":[{"claim":"a","claim":"b"}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "repeats"},
		{`{"assertions":[{"claim":"\ud800"}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "surrogate"},
		{`{"assertions":[{"claim":"a\udc00b"}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "surrogate"},
		{`{"assertions":[{"claim":"\ud800\u0041"}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "surrogate"},
		{`{"assertions":[{"claim":"x\ud83d"}]}`, CodeInvalidRequest, "payload.assertions[0].claim", "surrogate"},
		{`{"assertions":[{"claim":"` + strings.Repeat("c", MaxClaimBytes+1) + `"}]}`, CodeTooLong, "payload.assertions[0].claim", "bytes"},
		{`{"dsl":7}`, CodeInvalidRequest, "payload.dsl", "must be a string"},
		{`{"dsl":"` + strings.Repeat("d", MaxDSLBytes+1) + `"}`, CodeTooLong, "payload.dsl", "bytes"},
		{`{"assertions":[],"assertions":[]}`, CodeInvalidRequest, "payload.assertions", "repeats"},
		{`{"assertions":[{"claim":"a"}`, CodeInvalidRequest, "payload.assertions", "not valid JSON"},
	} {
		r := LogicGuard([]byte(tc.payload))
		if r.Problem == nil || !r.Blocked || r.Code != tc.code || r.Problem.Field != tc.field || !strings.Contains(r.Problem.Message, tc.in) {
			t.Errorf("LogicGuard(%.80s) = %+v (problem %+v), want %s %s %q", tc.payload, r, r.Problem, tc.code, tc.field, tc.in)
		}
	}
	var b strings.Builder
	b.WriteString(`{"assertions":[`)
	for i := range MaxAssertions + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"claim":"c%d"}`, i)
	}
	b.WriteString(`]}`)
	if r := LogicGuard([]byte(b.String())); r.Problem == nil || r.Code != CodeTooLong || r.Problem.Limit != MaxAssertions {
		t.Fatalf("LogicGuard of too many assertions = %+v", r)
	}
}

func TestEngines_LogicDSL(t *testing.T) {
	for payload, want := range map[string]string{
		`{"assertions":[],"dsl":"(AND x (NOT x))"}`: "(AND x (NOT x))",
		`{"dsl":"a\u0020b"}`:                        "a b",
	} {
		if got, ok := LogicDSL([]byte(payload)); !ok || got != want {
			t.Errorf("LogicDSL(%s) = %q, %v", payload, got, ok)
		}
	}
	for _, payload := range []string{`{}`, `{"dsl":1}`, `{"dsl":"x","assertions":7}`, `[]`} {
		if got, ok := LogicDSL([]byte(payload)); ok || got != "" {
			t.Errorf("LogicDSL(%s) = %q, %v", payload, got, ok)
		}
	}
}

// Engines, code_guard: each of the seed's patterns, in upper case and in
// its import forms.
func TestEngines_CodePatterns(t *testing.T) {
	for _, tc := range []struct {
		code string
		want []string
	}{
		{`eval("1+1")`, []string{"eval"}},
		{`EVAL ("1+1")`, []string{"eval"}},
		{`exec(code)`, []string{"exec"}},
		{`Exec (code)`, []string{"exec"}},
		{`subprocess.run(["ls"])`, []string{"subprocess"}},
		{`import subprocess`, []string{"subprocess"}},
		{`IMPORT SUBPROCESS`, []string{"subprocess"}},
		{`import subprocess as sp` + "\n" + `sp.call("ls")`, []string{"subprocess"}},
		{`import os, subprocess`, []string{"subprocess"}},
		{`import os.path as p, subprocess as s`, []string{"subprocess"}},
		{`from subprocess import Popen`, []string{"subprocess"}},
		{`m = __import__('subprocess')`, []string{"__import__", "subprocess"}},
		{`importlib.import_module("subprocess")`, []string{"importlib", "subprocess"}},
		{`os.system("rm -rf /")`, []string{"os.system"}},
		{`OS.SYSTEM("x")`, []string{"os.system"}},
		{`os . system ("x")`, []string{"os.system"}},
		{`from os import path, system`, []string{"os.system"}},
		{`os.popen("ls")`, []string{"os.popen"}},
		{`from os import popen`, []string{"os.popen"}},
		{`__import__("os")`, []string{"__import__"}},
		{`compile(src, "f", "exec")`, []string{"compile"}},
		{`x = builtins.compile(src, "f", "exec")`, []string{"compile"}},
		{`importlib.reload(m)`, []string{"importlib"}},
		{`import importlib`, []string{"importlib"}},
		{`from importlib import import_module`, []string{"importlib"}},
		{`eval(x); exec(y); os.system(z)`, []string{"eval", "exec", "os.system"}},
		// Python reads identifiers in NFKC form: fullwidth letters are
		// ASCII ones, and the long s is an s.
		{"ｅｖａｌ('1')", []string{"eval"}},
		{"eval\n(x)", []string{"eval"}},
		{"from os import (\n    path,\n    system,\n)", []string{"os.system"}},
		{"import os, \\\n    subprocess", []string{"subprocess"}},
		{"x = 1; import subprocess", []string{"subprocess"}},
		{"importlib .util.find_spec('x')", []string{"importlib"}},
		{"# eval(x) in a comment still counts", []string{"eval"}},
		{"print('exec(y)')", []string{"exec"}},
		{"import ſubprocess", []string{"subprocess"}},
		{"# café\nos.system('x')", []string{"os.system"}},
		// A backslash at the end of a line joins it to the next (a
		// Python line continuation is white space between tokens).
		{"eval \\\n(x)", []string{"eval"}},
		{"eval\\\r\n(x)", []string{"eval"}},
		{"os.\\\nsystem('x')", []string{"os.system"}},
		{"subprocess\\\n.run(['ls'])", []string{"subprocess"}},
		// A comment inside brackets sits between two tokens Python
		// reads as adjacent.
		{"f(eval # note\n('1+1'))", []string{"eval"}},
		{"[os. # note\n system('x')]", []string{"os.system"}},
		{"f(subprocess # note\n .run)", []string{"subprocess"}},
		{"(__import__ # note\n ('os'))", []string{"__import__"}},
		{"x = ('#', eval\n(y))", []string{"eval"}},
		// JavaScript's comments (a code payload may name its language)
		// separate no tokens either.
		{"eval/* note */(y)", []string{"eval"}},
		{"os./**/system('x')", []string{"os.system"}},
		{"f(eval // note\n(y))", []string{"eval"}},
	} {
		r := CodeGuard(tc.code)
		if !r.Blocked || r.Code != CodeDangerousCode || !slices.Equal(r.Patterns, tc.want) ||
			r.Reason != "Dangerous code patterns detected: "+strings.Join(tc.want, ", ") {
			t.Errorf("CodeGuard(%q) = %+v, want %v", tc.code, r, tc.want)
		}
	}
}

// Benign code passes: words that only contain a pattern's name are not
// the pattern.
func TestEngines_CodeBenign(t *testing.T) {
	for _, code := range []string{
		`print("evaluate")`,
		`evaluate(model)`,
		`executor.submit(job)`,
		`my_eval(x)`,
		`my_subprocess.run()`,
		`pattern = re.compile(r"\d+")`,
		`print("hello")` + "\n" + `x = [i * 2 for i in range(10)]`,
		`def retrieval(q): return q`,
		`os.path.join("a", "b")`,
		`importlibrary = 1`,
		"import os\nprint('subprocess')",
		"from os.path import system",
		"from os import path\nsystem = 1",
		"import os  # a note (\nfrom x import y",
		"x.compile (pattern)",
	} {
		if r := CodeGuard(code); r.Blocked || r.Patterns != nil || r.Reason != "No dangerous patterns found in code" {
			t.Errorf("CodeGuard(%q) = %+v", code, r)
		}
	}
	if r := CodeGuard(""); r.Blocked || r.Reason != "No code to verify" {
		t.Errorf("CodeGuard(\"\") = %+v", r)
	}
	if r := CodeGuard(strings.Repeat("x", MaxCodeBytes+1)); r.Problem == nil || r.Code != CodeTooLong {
		t.Errorf("CodeGuard over MaxCodeBytes = %+v", r)
	}
	if got := CodePatternNames(); !slices.IsSorted(got) || len(got) != 8 {
		t.Errorf("CodePatternNames = %v", got)
	}
}

func TestEngines_CodePayload(t *testing.T) {
	code, lang, p := CodeOf([]byte(`{"code":"import subprocess\nsubprocess.run(['ls'])","language":"python","extra":[1]}`))
	if p != nil || code != "import subprocess\nsubprocess.run(['ls'])" || lang != "python" {
		t.Fatalf("CodeOf = %q, %q, %v", code, lang, p)
	}
	if r := CodeGuardPayload([]byte(`{"code":"import subprocess"}`)); !r.Blocked || !slices.Equal(r.Patterns, []string{"subprocess"}) {
		t.Fatalf("CodeGuardPayload = %+v", r)
	}
	if r := CodeGuardPayload([]byte(`{"code":null}`)); r.Blocked || r.Reason != "No code to verify" {
		t.Fatalf("CodeGuardPayload of null code = %+v", r)
	}
	for _, tc := range []struct{ payload, code, field string }{
		{`{"code":1}`, CodeInvalidRequest, "payload.code"},
		{`{"code":"a","code":"b"}`, CodeInvalidRequest, "payload.code"},
		{`{"language":[]}`, CodeInvalidRequest, "payload.language"},
		{`{"language":"` + strings.Repeat("l", MaxLanguageBytes+1) + `"}`, CodeTooLong, "payload.language"},
		{`{"code":"` + strings.Repeat("c", MaxCodeBytes+1) + `"}`, CodeTooLong, "payload.code"},
		{"{\"code\":\"\xff\"}", CodeInvalidRequest, "payload.code"},
	} {
		r := CodeGuardPayload([]byte(tc.payload))
		if r.Problem == nil || r.Code != tc.code || r.Problem.Field != tc.field || !r.Blocked {
			t.Errorf("CodeGuardPayload(%.60s) = %+v (problem %+v)", tc.payload, r, r.Problem)
		}
	}
}

func TestPayloadDigest(t *testing.T) {
	// The empty object's canonical form is "{}".
	d, err := PayloadDigest([]byte(` { } `))
	if err != nil || d != "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Fatalf("PayloadDigest({}) = %q, %v", d, err)
	}
	a, _ := PayloadDigest([]byte(`{"b":1.0,"a":[1e2,"x"]}`))
	b, _ := PayloadDigest([]byte(`{"a":[100,"x"],"b":1}`))
	if a != b || len(a) != len("sha256:")+64 {
		t.Fatalf("digests of equal payloads differ: %q %q", a, b)
	}
	for _, bad := range []string{``, `[]`, `{"a":1e400}`, `{"a":1,"a":2}`, `{`} {
		if d, err := PayloadDigest([]byte(bad)); err == nil || d != "" {
			t.Errorf("PayloadDigest(%q) = %q, %v", bad, d, err)
		}
	}
	m := &Message{SenderAgentID: "a", ReceiverAgentID: "b", PayloadType: PayloadGeneral, Payload: []byte(`{"a":[100,"x"],"b":1}`)}
	if d, p := ValidateDigest(m, 0); p != nil || d != a {
		t.Fatalf("ValidateDigest = %q, %v", d, p)
	}
	m.TraceID = "a b"
	if d, p := ValidateDigest(m, 0); p == nil || d != "" || p.Field != "trace_id" {
		t.Fatalf("ValidateDigest of a bad trace id = %q, %v", d, p)
	}
}

// Trust Boundary: the token bucket, 60 a minute, burst 60.
func TestTrustBoundary_TokenBucket(t *testing.T) {
	t0 := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
	var b Bucket
	for i := range 60 {
		if ok, _ := b.Take(t0, 60, 60); !ok {
			t.Fatalf("take %d refused", i)
		}
	}
	ok, retry := b.Take(t0, 60, 60)
	if ok || retry != time.Second {
		t.Fatalf("61st take = %v, %v; want refused, retry after 1s", ok, retry)
	}
	if ok, retry := b.Take(t0.Add(999*time.Millisecond), 60, 60); ok || retry != time.Millisecond {
		t.Fatalf("take after 999ms = %v, %v", ok, retry)
	}
	if ok, _ := b.Take(t0.Add(time.Second), 60, 60); !ok {
		t.Fatal("take after 1s refused")
	}
	// A time before the last refill mints nothing and does not panic;
	// the retry counts from then (1 s back, then 1 s for the token).
	if ok, retry := b.Take(t0, 60, 60); ok || retry != 2*time.Second {
		t.Fatalf("take in the past = %v, %v", ok, retry)
	}
	if b.Last != t0.Add(time.Second).UnixNano() {
		t.Fatalf("Last moved back: %d", b.Last)
	}
	// A long idle refills to the burst, no more.
	later := t0.Add(1000 * time.Hour)
	for i := range 60 {
		if ok, _ := b.Take(later, 60, 60); !ok {
			t.Fatalf("take %d after idle refused", i)
		}
	}
	if ok, _ := b.Take(later, 60, 60); ok {
		t.Fatal("take past the burst allowed")
	}
}

func TestTrustBoundary_BucketRates(t *testing.T) {
	t0 := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
	// 7 a minute: a token every 60/7 s, rounded up to the nanosecond.
	b := Bucket{}
	b.Take(t0, 7, 1)
	if ok, retry := b.Take(t0, 7, 1); ok || retry != 8571428572 {
		t.Fatalf("retry at 7/min = %v, %d", ok, retry)
	}
	if ok, _ := b.Take(t0.Add(8571428571), 7, 1); ok {
		t.Fatal("token back a nanosecond early")
	}
	if ok, _ := b.Take(t0.Add(8571428572), 7, 1); !ok {
		t.Fatal("token not back on time")
	}
	// A time centuries back saturates the wait rather than overflowing.
	far := Bucket{Spent: TokenUnit, Last: math.MaxInt64 - 5}
	if ok, retry := far.Take(time.Unix(0, math.MinInt64+5), 60, 1); ok || retry != math.MaxInt64 {
		t.Fatalf("take centuries back = %v, %v", ok, retry)
	}
	// Out-of-range rates are clamped, never a division by zero.
	for _, rb := range [][2]int64{{0, 0}, {-5, -5}, {1 << 62, 1 << 62}} {
		var b Bucket
		if ok, _ := b.Take(t0, rb[0], rb[1]); !ok {
			t.Errorf("Take(%v) refused a full bucket", rb)
		}
		b.Take(t0, rb[0], rb[1])
	}
}

func TestTrustBoundary_BucketIdle(t *testing.T) {
	t0 := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
	var b Bucket
	b.Take(t0, 60, 60)
	if b.Idle(t0.Add(5*time.Minute-1), 5*time.Minute) || !b.Idle(t0.Add(5*time.Minute), 5*time.Minute) {
		t.Fatal("Idle at 5 minutes")
	}
	if b.Idle(t0.Add(-time.Hour), time.Minute) {
		t.Fatal("Idle before Last")
	}
	if b.Full(t0, 60) || b.Full(t0.Add(999*time.Millisecond), 60) || !b.Full(t0.Add(time.Second), 60) {
		t.Fatal("Full after one take at 60/min")
	}
	if !(&Bucket{}).Full(t0, 60) {
		t.Fatal("the zero Bucket is not full")
	}
}

// Digests computed at once on several goroutines (the pooled scratch
// buffers are shared) equal the ones computed one by one.
func TestPayloadDigest_Concurrent(t *testing.T) {
	payloads := make([][]byte, 16)
	want := make([]string, len(payloads))
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", i*4000))
		want[i], _ = PayloadDigest(payloads[i])
	}
	errs := make(chan string, len(payloads)*8)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range payloads {
				i := (k + g) % len(payloads)
				if got, _ := PayloadDigest(payloads[i]); got != want[i] {
					errs <- fmt.Sprintf("payload %d: %s, want %s", i, got, want[i])
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
