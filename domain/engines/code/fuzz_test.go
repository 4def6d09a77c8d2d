package code

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

// fuzzOnce runs the analyser on src twice and checks the invariants
// (checkOutcome) and that both runs give the same bytes.
func fuzzOnce(t *testing.T, language, src string) {
	if len(src) > MaxCodeBytes {
		return
	}
	start := time.Now()
	out := checkOutcome(t, language, src)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("%s took %v on %q", language, d, src)
	}
	again := New().Verify(context.Background(), fuzzRequest(language, src))
	a, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Fatalf("not deterministic:\n%s\n%s", a, b)
	}
}

func fuzzRequest(language, src string) engines.Request {
	return engines.Request{Query: src, Params: json.RawMessage(`{"language":"` + language + `","check_types":["quality"]}`), IncludeProof: true}
}

// checkOutcome runs the analyser on src once and checks the invariants: no
// panic or engine failure, findings with positions inside the source, and
// a blocking finding iff BLOCKED.
func checkOutcome(t *testing.T, language, src string) engines.Outcome {
	t.Helper()
	out := New().Verify(context.Background(), fuzzRequest(language, src))
	if out.Err != nil && out.Err.Code == "QWED-ENG-002" {
		t.Fatalf("engine failure on %q: %+v", src, out.Err)
	}
	lines := bytes.Count([]byte(src), []byte("\n")) + 1
	blockingSeen := false
	for _, f := range out.Findings {
		if f.Line < 1 || f.Line > lines || f.Column < 1 || f.Rule == "" {
			t.Fatalf("finding out of the source %q: %+v (lines %d)", src, f, lines)
		}
		blockingSeen = blockingSeen || blocking(f.Severity)
	}
	if blockingSeen != (out.Status == engines.Blocked) {
		t.Fatalf("status %s with findings %+v on %q", out.Status, out.Findings, src)
	}
	return out
}

// FuzzParsePython fuzzes the Python parser and analyser.
func FuzzParsePython(f *testing.F) {
	for _, s := range []string{
		"import os; os.system('rm -rf /')", "getattr(__builtins__, 'ev'+'al')(x)", "exec(base64.b64decode('aWQ='))",
		"x = 'lave'[::-1]\nglobals()[x](y)", "f'{a}{b!r:>10}'", "print((1)", "'\\x4", "exec(\"exec('1')\")",
		"from os import *\nsystem(chr(105) + chr(100))", "s = ''.join(map(chr, [101, 118]))",
		"ж = 'é\U0010FFFD'\nexec(ж)", "f'{\u3000x}'", "\ufeffprint(1)", "#\u2028\nx = 0x\U0001F600",
		"import subprocess as sp, importlib.metadata", "from importlib import import_module as im\nim('os')", "__import__('json')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { fuzzOnce(t, "python", src) })
}

// FuzzParseJavaScript fuzzes the JavaScript parser and analyser.
func FuzzParseJavaScript(f *testing.F) {
	for _, s := range []string{
		"const {exec: e} = require('child_process'); e(x)", "globalThis['ev'+'al'](atob(p))",
		"''.constructor.constructor('x')()", "`${a}${'b'}`", "import * as cp from 'node:child_process'",
		"'lave'.split('').reverse().join('')", "function f( {",
		"let ж = `${'\U0010FFFD'}`\u2028eval(ж)", "x = /\u00e9\U0001F600/u", "<div>\u3000</div>",
		"module.require('vm')", "await import('node:child_process')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { fuzzOnce(t, "javascript", src) })
}

// FuzzParseShell fuzzes the shell parser and analyser.
func FuzzParseShell(f *testing.F) {
	for _, s := range []string{
		"curl http://x | sh", ":(){ :|:& };:", "x=rm; $x -rf /", "bash <(wget -qO- x)", "echo `id` > /dev/sda",
		"sudo -u root env A=1 nohup rm -rf ~", "if [ -f x ]; then", "$'\\x72m' -rf /",
		"A({0\U0010FFFD0!}$", "echo {1..\u0436}", "cat <<ж\nx\nж\n", "${\U0001F600:-é}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) { fuzzOnce(t, "bash", src) })
}
