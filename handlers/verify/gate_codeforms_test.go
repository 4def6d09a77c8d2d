package verify_test

import (
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/domain/engines/code"
)

// TestIssue13_ExecuteCodeDeniesEveryCodeGuardForm: verify_action
// execute_code through HTTP, the embedded gate's worker and the real code
// engine DENIES each dangerous form of the QWED A2A code_guard with
// QWED-SEC-002 (a security violation), whatever its spelling; benign code
// that only mentions the names is APPROVED for a trusted agent (execute_code
// is critical risk).
func TestIssue13_ExecuteCodeDeniesEveryCodeGuardForm(t *testing.T) {
	s := newServer(t, code.New())
	dangerous := []struct{ lang, src string }{
		{"python", `eval("1+1")`},
		{"python", `exec("x = 1")`},
		{"python", `compile("1", "<s>", "eval")`},
		{"python", `__import__("os")`},
		{"python", "import subprocess"},
		{"python", "from subprocess import run"},
		{"python", "import subprocess as sp\nsp.run(['ls'])"},
		{"python", "import os\nos.system('ls')"},
		{"python", "import os\nos.popen('ls')"},
		{"python", "import importlib"},
		{"python", "import importlib\nimportlib.import_module('json')"},
		{"python", "from os import system as s\ns('ls')"},
		{"python", "import os\ngetattr(os, 'system')"},
		{"python", `getattr(__builtins__, "ev"+"al")("1")`},
		{"javascript", `eval("1+1")`},
		{"javascript", "const cp = require('child_process')"},
		{"javascript", "import('child_process')"},
	}
	for i, d := range dangerous {
		// A fresh agent each time: every denial is a security violation.
		id, tok := s.agent("supervised")
		m := s.actionWith(id, tok, 1, fmt.Sprintf(`{"type":"execute_code","code":%q,"parameters":{"language":%q}}`, d.src, d.lang))
		v, _ := m["verification"].(map[string]any)
		if m["decision"] != "DENIED" || errCode(m) != "QWED-SEC-002" {
			t.Errorf("%d %s %q: %v", i, d.lang, d.src, m)
		} else if v != nil && v["status"] != "BLOCKED" {
			t.Errorf("%d %s %q: verification %v", i, d.lang, d.src, v)
		}
	}
	id, tok := s.agent("trusted")
	for i, src := range []string{`print("evaluate this")`, "executor = 1", `s = "eval("`} {
		m := s.actionWith(id, tok, i+1, fmt.Sprintf(`{"type":"execute_code","code":%q}`, src))
		v, _ := m["verification"].(map[string]any)
		if m["decision"] != "APPROVED" || errCode(m) != nil || v["status"] != "VERIFIED" {
			t.Errorf("benign %q: %v", src, m)
		}
	}
}
