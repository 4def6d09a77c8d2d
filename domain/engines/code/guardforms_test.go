package code

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgate/agentgate/domain/engines"
)

// guardForm is one form of the QWED A2A code_guard's patterns written as
// code, with the rule the engine must report for it.
type guardForm struct {
	name, src, rule string
}

// pythonGuardForms are the dangerous forms of issue 13 (the patterns of the
// QWED A2A code_guard: eval, exec, compile, __import__, subprocess in its
// import and alias forms, os.system, os.popen, importlib) written as
// Python, each with the rule that blocks it.
var pythonGuardForms = []guardForm{
	{"eval of a constant", `eval("1+1")`, pyExecConst},
	{"exec of a constant", `exec("x = 1")`, pyExecConst},
	{"eval of a variable", "eval(x)", pyExec},
	{"compile", `compile("1", "<s>", "eval")`, pyCompile},
	{"__import__ of os", `__import__("os")`, pyCompile},
	{"__import__ of json", `m = __import__("json")`, pyCompile},
	{"__import__ then system", `__import__("os").system("ls")`, pyProc},
	{"import subprocess", "import subprocess", pyImportRun},
	{"import subprocess with others", "import json, subprocess", pyImportRun},
	{"from subprocess import run", "from subprocess import run", pyImportRun},
	{"from subprocess import *", "from subprocess import *", pyImportRun},
	{"import subprocess as sp", "import subprocess as sp", pyImportRun},
	{"subprocess alias called", "import subprocess as sp\nsp.run(['ls'])", pyProc},
	{"os.system", "import os\nos.system('ls')", pyProc},
	{"os.popen", "import os\nos.popen('ls')", pyProc},
	{"import importlib", "import importlib", pyImportRun},
	{"import importlib.util", "import importlib.util", pyImportRun},
	{"from importlib import import_module", "from importlib import import_module", pyImportRun},
	{"importlib.import_module of a constant", "import importlib\nimportlib.import_module('os')", pyCompile},
	{"from os import system as s", "from os import system as s", pyImportRun},
	{"system alias called", "from os import system as s\ns('ls')", pyProc},
	{"from os import popen", "from os import popen", pyImportRun},
	{"from builtins import eval", "from builtins import eval", pyImportRun},
	{"getattr os system", "import os\ngetattr(os, 'system')", pyObfLookup},
	{"getattr builtins computed eval", `getattr(__builtins__, "ev"+"al")`, pyObfLookup},
	{"getattr builtins computed eval called", `getattr(__builtins__, "ev"+"al")("1")`, pyExecConst},
	{"import runpy", "import runpy", pyImportRun},
	{"import pty", "import pty", pyImportRun},
}

// javascriptGuardForms are the same forms in JavaScript.
var javascriptGuardForms = []guardForm{
	{"eval of a constant", `eval("1+1")`, jsEvalK},
	{"Function constructor", `new Function("return 1")`, jsFunction},
	{"require child_process", "const cp = require('child_process')", jsImportR},
	{"require node:child_process", "require('node:child_process')", jsImportR},
	{"module.require child_process", "module.require('child_process')", jsImportR},
	{"import child_process", "import cp from 'child_process'", jsImportR},
	{"import named from child_process", "import { exec as e } from 'child_process'", jsImportR},
	{"dynamic import of child_process", "import('child_process')", jsImportR},
	{"require vm", "const vm = require('vm')", jsImportR},
	{"child_process alias called", "const { execSync: run } = require('child_process');\nrun('ls')", jsProc},
}

// benignGuardForms must not be flagged at all in the language.
var benignGuardForms = []struct{ lang, src string }{
	{"python", `print("evaluate this")`},
	{"python", "executor = 1"},
	{"python", `s = "eval("`},
	{"python", `s = "import subprocess; os.system('ls')"`},
	{"python", "def compile_report(x):\n    return x\ncompile_report(1)"},
	{"python", "import json\nprint(json.dumps({'exec': 1}))"},
	{"python", "from importlib.metadata import version\nversion('pip')"},
	{"python", "import importlib.resources"},
	{"javascript", `console.log("evaluate this")`},
	{"javascript", "const executor = 1"},
	{"javascript", `const s = "eval("`},
	{"javascript", "const re = /a/;\nre.exec('abc')"},
}

// TestA2A_CodeGuardFormsBlock: each form is a finding of critical or high
// severity with its rule, so Verify answers BLOCKED with QWED-SEC-002 and
// ClassifyExecution a security violation (the verify_action path denies it
// with QWED-SEC-002, domain/engineverdict.go).
func TestA2A_CodeGuardFormsBlock(t *testing.T) {
	for _, set := range []struct {
		lang  string
		forms []guardForm
	}{{"python", pythonGuardForms}, {"javascript", javascriptGuardForms}} {
		for _, f := range set.forms {
			t.Run(set.lang+"/"+f.name, func(t *testing.T) {
				an, prob := Analyse(set.lang, f.src, nil)
				if prob != nil {
					t.Fatalf("problem %s: %s", prob.Code, prob.Message)
				}
				found := false
				for _, g := range an.Blocking() {
					found = found || g.Rule == f.rule
				}
				if !found {
					t.Fatalf("no blocking %s; findings:\n%s", f.rule, dump(an.Findings))
				}
				params, _ := json.Marshal(map[string]string{"language": set.lang})
				out := New().Verify(context.Background(), engines.Request{Query: f.src, Params: params})
				if out.Status != engines.Blocked || out.Err == nil || out.Err.Code != "QWED-SEC-002" {
					t.Fatalf("Verify: %s %+v", out.Status, out.Err)
				}
				if a := ClassifyExecution(set.lang, f.src); a.Status != engines.Blocked || !a.Violation {
					t.Fatalf("ClassifyExecution: %+v", a)
				}
			})
		}
	}
}

// TestA2A_CodeGuardBenignNotFlagged: code that only mentions the names
// (in strings, in longer identifiers, a method of its own) has no
// finding at all.
func TestA2A_CodeGuardBenignNotFlagged(t *testing.T) {
	for _, b := range benignGuardForms {
		an, prob := Analyse(b.lang, b.src, nil)
		if prob != nil {
			t.Fatalf("%s %q: problem %s", b.lang, b.src, prob.Code)
		}
		for _, f := range an.Findings {
			if f.Rule != pyImport && f.Rule != jsImport { // an info note on a mere import is fine
				t.Errorf("%s %q: unexpected %s %s: %s", b.lang, b.src, f.Rule, f.Severity, f.Message)
			}
		}
		if out := New().Verify(context.Background(), engines.Request{Query: b.src, Params: json.RawMessage(`{"language":"` + b.lang + `"}`)}); out.Status != engines.Verified {
			t.Errorf("%s %q: %s %+v", b.lang, b.src, out.Status, out.Err)
		}
	}
}

// TestA2A_WildcardImportOfOtherModulesStaysLow: a wildcard import of a
// module that only reaches processes through some of its names (os) is
// still PY-IMPORT-002, low; its calls are judged one by one.
func TestA2A_WildcardImportOfOtherModulesStaysLow(t *testing.T) {
	runCodeCases(t, "python", []codeCase{
		{name: "from os import *", src: "from os import *", block: false, want: []string{"PY-IMPORT-002@1"}, not: []string{"PY-IMPORT-003"}},
		{name: "from os import path", src: "from os import path", block: false, want: []string{"PY-IMPORT-001@1"}, not: []string{"PY-IMPORT-003"}},
		{name: "import os", src: "import os", block: false, want: []string{"PY-IMPORT-001@1"}},
	})
}
