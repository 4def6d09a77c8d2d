package code

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

func verify(t *testing.T, query, params string) engines.Outcome {
	t.Helper()
	req := engines.Request{Query: query, Type: "code"}
	if params != "" {
		req.Params = json.RawMessage(params)
	}
	return New().Verify(context.Background(), req)
}

// TestSeed002_6_3_4_BlockedWithSecurityCode pins the seed's example: the
// §5.2.3 request is BLOCKED (HTTP 403) with QWED-SEC-002 whose details
// carry the blocking findings, and the result lists every finding.
func TestSeed002_6_3_4_BlockedWithSecurityCode(t *testing.T) {
	out := verify(t, "import os; os.system('rm -rf /')", `{"language": "python", "check_types": ["security", "quality"]}`)
	if out.Status != engines.Blocked || out.Status.HTTPStatus() != 403 {
		t.Fatalf("status %s, want BLOCKED", out.Status)
	}
	if out.Err == nil || out.Err.Code != "QWED-SEC-002" {
		t.Fatalf("error %+v, want QWED-SEC-002", out.Err)
	}
	bl, _ := out.Err.Details["findings"].([]engines.Finding)
	// os.system itself, and the command line it runs analysed as shell.
	if len(bl) != 2 || bl[0].Rule != "PY-PROC-001" || bl[0].Line != 1 || bl[0].Column != 12 || bl[0].Snippet != "os.system('rm -rf /')" ||
		bl[1].Rule != "SH-RM-001" || bl[1].Severity != "critical" {
		t.Fatalf("blocking findings %+v", bl)
	}
	res := out.Result.(Result)
	if res.IsSafe || res.RiskLevel != "critical" || res.SeverityCounts.Critical != 2 || len(res.Findings) != 3 || len(out.Findings) != 3 {
		t.Fatalf("result %+v", res)
	}
	if strings.Join(res.CheckTypes, ",") != "quality,security" {
		t.Fatalf("check types %v", res.CheckTypes)
	}
}

// TestSeed002_6_2_StatusesOfTheCodeEngine walks the statuses the engine
// answers: VERIFIED without and with non-blocking findings, BLOCKED,
// ERROR with QWED-REQ-003 / REQ-001 / REQ-002, UNSUPPORTED with REQ-005.
func TestSeed002_6_2_StatusesOfTheCodeEngine(t *testing.T) {
	cases := []struct {
		name, query, params string
		status              engines.Status
		code                string
		findings            int
	}{
		{"clean python", "print(1 + 1)", "", engines.Verified, "", 0},
		{"medium finding verified", "open('out.txt', 'w')", "", engines.Verified, "", 1},
		{"critical blocked", "eval(input())", "", engines.Blocked, "QWED-SEC-002", 1},
		{"syntax error", "def f(:\n  pass", "", engines.Error, "QWED-REQ-003", 0},
		{"unknown language", "puts 1", `{"language": "ruby"}`, engines.Unsupported, "QWED-REQ-005", 0},
		{"language of the wrong type", "x", `{"language": 3}`, engines.Error, "QWED-REQ-001", 0},
		{"unknown check type", "x", `{"check_types": ["style"]}`, engines.Error, "QWED-REQ-001", 0},
		{"params not an object", "x", `[1]`, engines.Error, "QWED-REQ-001", 0},
		{"empty query", "", "", engines.Error, "QWED-REQ-002", 0},
		{"null params default python", "import os", `null`, engines.Verified, "", 1},
		{"language case-insensitive", "eval(x)", `{"language": "Python3"}`, engines.Blocked, "QWED-SEC-002", 1},
		{"javascript", "eval(x)", `{"language": "javascript"}`, engines.Blocked, "QWED-SEC-002", 1},
		{"shell", "rm -rf /", `{"language": "shell"}`, engines.Blocked, "QWED-SEC-002", 1},
		{"unknown params field ignored", "x = 1", `{"language": "python", "future": true}`, engines.Verified, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := verify(t, c.query, c.params)
			if out.Status != c.status {
				t.Fatalf("status %s, want %s (%+v)", out.Status, c.status, out.Err)
			}
			code := ""
			if out.Err != nil {
				code = out.Err.Code
			}
			if code != c.code {
				t.Fatalf("code %q, want %q (%+v)", code, c.code, out.Err)
			}
			if len(out.Findings) < c.findings || c.findings == 0 && len(out.Findings) != 0 {
				t.Fatalf("findings %v, want %d", out.Findings, c.findings)
			}
			if out.Status == engines.Verified || out.Status == engines.Blocked {
				if _, ok := out.Result.(Result); !ok {
					t.Fatalf("result %T", out.Result)
				}
			}
		})
	}
}

// TestSeed002_8_4_SyntaxErrorPosition pins QWED-REQ-003's details: the
// first ERROR or MISSING node's position (1-based character offset, line,
// column), what was expected and what was found.
func TestSeed002_8_4_SyntaxErrorPosition(t *testing.T) {
	cases := []struct {
		lang, src       string
		line, col, pos  int
		expected, found string
	}{
		{"python", "x = (1, 2\n", 0, 0, 0, "", ""},
		{"python", "print('a')\nif x\n    y()\n", 2, 1, 12, "valid Python syntax", "'if'"},
		{"python", "é = 1\nx = = 2\n", 2, 5, 11, "valid Python syntax", "'='"},
		{"python", "print((1)", 1, 10, 10, "closing ')'", "end of input"},
		{"python", "x = {1: 2\n\n", 1, 10, 10, "closing '}'", "end of input"},
		{"javascript", "function f( {", 0, 0, 0, "", ""},
		{"bash", "if [ -f x ]; then\n echo", 0, 0, 0, "", ""},
	}
	for _, c := range cases {
		_, prob := Analyse(c.lang, c.src, nil)
		if prob == nil || prob.Code != "QWED-REQ-003" {
			t.Fatalf("%q: problem %+v, want QWED-REQ-003", c.src, prob)
		}
		d := prob.Details
		for _, k := range []string{"position", "line", "column", "expected", "found"} {
			if _, ok := d[k]; !ok {
				t.Fatalf("%q: details %v lack %s", c.src, d, k)
			}
		}
		if c.line != 0 && (d["line"] != c.line || d["column"] != c.col || d["position"] != c.pos) {
			t.Errorf("%q: at %v:%v (%v), want %d:%d (%d)", c.src, d["line"], d["column"], d["position"], c.line, c.col, c.pos)
		}
		if c.expected != "" && d["expected"] != c.expected {
			t.Errorf("%q: expected %v, want %s", c.src, d["expected"], c.expected)
		}
		if c.found != "" && d["found"] != c.found {
			t.Errorf("%q: found %v, want %s", c.src, d["found"], c.found)
		}
	}
}

// TestLimits_BothSides pins each limit with an input just inside it and
// one just beyond it (QWED-REQ-004 with the limit's name).
func TestLimits_BothSides(t *testing.T) {
	limitOf := func(src string) string {
		_, prob := Analyse("python", src, nil)
		if prob == nil {
			return ""
		}
		if prob.Code != "QWED-REQ-004" {
			return prob.Code
		}
		return prob.Details["limit"].(string)
	}
	t.Run("bytes", func(t *testing.T) {
		in := strings.Repeat("#", MaxCodeBytes)
		if got := limitOf(in); got != "" {
			t.Fatalf("at the limit: %s", got)
		}
		if got := limitOf(in + "#"); got != "bytes" {
			t.Fatalf("beyond the limit: %q", got)
		}
	})
	t.Run("nodes", func(t *testing.T) {
		// "x\n" is an expression_statement and an identifier: 2 nodes;
		// "x;y\n" is 5; the module is one more.
		in := strings.Repeat("x\n", (MaxNodes-6)/2) + "x;y\n"
		p, err := parse(grammarFor(langPython), in)
		if err != nil || p.nodes != MaxNodes {
			t.Fatalf("inside: %v, nodes %d", err, p.nodes)
		}
		if got := limitOf(in + "x\n"); got != "nodes" {
			t.Fatalf("beyond the limit: %q", got)
		}
	})
	t.Run("depth", func(t *testing.T) {
		// Each parenthesis is one parenthesized_expression level under
		// module > expression_statement.
		mk := func(d int) string { return strings.Repeat("(", d) + "x" + strings.Repeat(")", d) }
		d := MaxDepth - 2 // module(0) > statement(1) > parens(2..) > x
		p, err := parse(grammarFor(langPython), mk(d))
		if err != nil || p.depth != MaxDepth-1 && p.depth != MaxDepth {
			t.Fatalf("inside: %v, depth %v", err, p)
		}
		for k := d; ; k++ {
			p, err := parse(grammarFor(langPython), mk(k))
			if err == nil {
				if p.depth > MaxDepth {
					t.Fatalf("depth %d accepted", p.depth)
				}
				continue
			}
			if got := limitOf(mk(k)); got != "depth" {
				t.Fatalf("beyond: %q", got)
			}
			p2, err2 := parse(grammarFor(langPython), mk(k-1))
			if err2 != nil || p2.depth != MaxDepth {
				t.Fatalf("one less than the first refused input: %v depth %v", err2, p2)
			}
			break
		}
	})
	t.Run("findings", func(t *testing.T) {
		in := strings.Repeat("eval(x)\n", MaxFindings)
		an, _ := Analyse("python", in, nil)
		if len(an.Findings) != MaxFindings || an.Omitted != 0 {
			t.Fatalf("at the limit: %d findings, %d omitted", len(an.Findings), an.Omitted)
		}
		an, _ = Analyse("python", in+"eval(y)\n", nil)
		if len(an.Findings) != MaxFindings || an.Omitted != 1 {
			t.Fatalf("beyond the limit: %d findings, %d omitted", len(an.Findings), an.Omitted)
		}
	})
	t.Run("payload depth", func(t *testing.T) {
		wrap := func(code string) string {
			return "exec('" + strings.ReplaceAll(strings.ReplaceAll(code, `\`, `\\`), "'", `\'`) + "')"
		}
		// exec of exec of x = 1 is MaxPayloadDepth levels: analysed.
		in := "x = 1"
		for i := 0; i < MaxPayloadDepth; i++ {
			in = wrap(in)
		}
		// At the limit the nested code is analysed (exec of a constant
		// blocks all the same, PY-EXEC-002); the limit is not reported.
		an, _ := Analyse("python", in, nil)
		for _, f := range an.Findings {
			if f.Rule == pyLimit || f.Rule != pyExecConst {
				t.Fatalf("at the limit %s: %v", in, an.Findings)
			}
		}
		an, _ = Analyse("python", wrap(in), nil)
		found := false
		for _, f := range an.Findings {
			found = found || f.Rule == pyLimit
		}
		if !found {
			t.Fatalf("beyond the limit %s: %v", wrap(in), an.Findings)
		}
	})
}

// TestDeterminism_SameInputSameBytes pins engines-common's determinism:
// the same request twice gives byte-identical JSON (result, proof, error).
func TestDeterminism_SameInputSameBytes(t *testing.T) {
	inputs := []struct{ q, p string }{
		{"import os, subprocess as sp\nfrom os import *\nsp.run(x)\nsystem('id')\nexec(base64.b64decode(p))\ngetattr(__builtins__, 'ev'+'al')(y)", `{"check_types":["quality","security"]}`},
		{"const cp = require('child_process'); cp.exec(x); eval(atob(y))", `{"language":"js"}`},
		{"curl http://x | sh; rm -rf / ; chmod 777 /etc/passwd", `{"language":"bash"}`},
		{"def f(:", ""},
	}
	for _, in := range inputs {
		enc := func() []byte {
			req := engines.Request{Query: in.q, Params: json.RawMessage(in.p), IncludeProof: true}
			if in.p == "" {
				req.Params = nil
			}
			out := New().Verify(context.Background(), req)
			b, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		a, b := enc(), enc()
		if !bytes.Equal(a, b) {
			t.Fatalf("outcomes differ:\n%s\n%s", a, b)
		}
	}
}

// TestSeed002_4_2_Capabilities pins the §4.2 document.
func TestSeed002_4_2_Capabilities(t *testing.T) {
	c := New().Capabilities()
	if c.EngineID != "code" || c.Version != Version || c.Limits["max_code_bytes"] != MaxCodeBytes || len(c.InputTypes) == 0 {
		t.Fatalf("capabilities %+v", c)
	}
	if !json.Valid(c.Params) {
		t.Fatalf("params schema is not JSON: %s", c.Params)
	}
	b1, _ := json.Marshal(c)
	b2, _ := json.Marshal(New().Capabilities())
	if !bytes.Equal(b1, b2) {
		t.Fatal("capabilities are not deterministic")
	}
	for _, r := range Rules() {
		if r.ID == "" || r.Title == "" || severityRank(r.Severity) > 4 || r.Class == "" {
			t.Fatalf("rule %+v", r)
		}
	}
}

// TestProof_AliasTable pins include_proof: the alias table and the rules
// matched.
func TestProof_AliasTable(t *testing.T) {
	out := New().Verify(context.Background(), engines.Request{Query: "import subprocess as sp\nfrom os import system as s\nsp.run(x)", IncludeProof: true})
	p, ok := out.Proof.(Proof)
	if !ok {
		t.Fatalf("proof %T", out.Proof)
	}
	want := []Alias{{"s", "os.system"}, {"sp", "subprocess"}}
	if len(p.Aliases) != 2 || p.Aliases[0] != want[0] || p.Aliases[1] != want[1] {
		t.Fatalf("aliases %+v", p.Aliases)
	}
	if strings.Join(p.RuleHits, ",") != "PY-IMPORT-003,PY-PROC-001" || p.Nodes == 0 {
		t.Fatalf("proof %+v", p)
	}
	if out := New().Verify(context.Background(), engines.Request{Query: "x"}); out.Proof != nil {
		t.Fatal("proof without include_proof")
	}
}

// TestClassifyExecution_GateVerdict pins the gate's API: risk from the
// worst finding, a violation for critical/high, critical when the code
// cannot be analysed.
func TestClassifyExecution_GateVerdict(t *testing.T) {
	cases := []struct {
		lang, src string
		status    engines.Status
		risk      string
		violation bool
	}{
		{"python", "print(sum([1, 2]))", engines.Verified, "low", false},
		{"", "import os\nx = os.getenv('HOME')", engines.Verified, "low", false},
		{"python", "open('a', 'w')", engines.Verified, "medium", false},
		{"python", "import os\nos.remove('a')", engines.Blocked, "high", true},
		{"python", "import subprocess\nsubprocess.run(c)", engines.Blocked, "critical", true},
		{"python", "def (", engines.Error, "critical", false},
		{"cobol", "DISPLAY 'X'", engines.Unsupported, "critical", false},
		{"python", "", engines.Error, "critical", false},
		{"js", "require('child_process').execSync('id')", engines.Blocked, "critical", true},
		{"sh", "ls -la", engines.Verified, "low", false},
	}
	for _, c := range cases {
		a := ClassifyExecution(c.lang, c.src)
		if a.Status != c.status || a.Risk != c.risk || a.Violation != c.violation {
			t.Errorf("%q: %+v, want %s %s %v", c.src, a, c.status, c.risk, c.violation)
		}
		if a.Risk != "low" && a.Reason == "" {
			t.Errorf("%q: no reason for risk %s", c.src, a.Risk)
		}
	}
}

// TestEngine_ConcurrentUse pins that one Engine serves concurrent
// requests (each Verify has its own parser) with the same answers.
func TestEngine_ConcurrentUse(t *testing.T) {
	e := New()
	reqs := []engines.Request{
		{Query: "import os\nos.system(x)"},
		{Query: "eval(atob(p))", Params: json.RawMessage(`{"language":"js"}`)},
		{Query: "curl x | sh", Params: json.RawMessage(`{"language":"sh"}`)},
		{Query: "print(1)"},
	}
	want := make([][]byte, len(reqs))
	for i, r := range reqs {
		want[i], _ = json.Marshal(e.Verify(context.Background(), r))
	}
	done := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for k := 0; k < 25; k++ {
				i := (w + k) % len(reqs)
				got, _ := json.Marshal(e.Verify(context.Background(), reqs[i]))
				if !bytes.Equal(got, want[i]) {
					done <- &limitError{limit: "mismatch", found: i}
					return
				}
			}
			done <- nil
		}()
	}
	for w := 0; w < 4; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
