// Package code is the code engine of the QWED protocol v1.0 (§4.1 "code", §5.2.3):
// security analysis of Python, JavaScript and shell source on a real
// syntax tree (tree-sitter), before the code runs.
//
// The source is parsed with tree-sitter's grammar for its language and
// the C tree is copied into Go nodes in one cursor walk, within the
// limits of limits.go (bytes, nodes, depth, parser work). A tree with an
// ERROR or MISSING node is refused with QWED-REQ-003 and the position of
// the first such node. The bash grammar reads every code point above
// U+00FF as one stand-in of the same lexical class (narrow.go): its C
// scanner indexes a 256-entry table with the code point. The analysers
// then work on the copy:
//
//   - Python (python.go, pycheck.go, pyrules.go): an import/alias table
//     (import subprocess as sp; from os import system as s; from
//     subprocess import *), resolution of attribute chains and calls to
//     canonical names (sp.run → subprocess.run, __import__('os').system →
//     os.system), constant folding of strings ('ev'+'al', ”.join, chr,
//     slicing, f-strings) so that getattr(__builtins__, 'ev'+'al'),
//     __builtins__['exec'] and globals()['eval'] resolve, data flow of
//     decoded payloads (base64, hex, rot13 …) through assignments into
//     exec/eval, and analysis of the code such a constant or statically
//     decoded payload contains. Every form the QWED A2A code_guard
//     refuses blocks: eval/exec even of a harmless constant, compile,
//     __import__ and importlib.import_module of any module, and the mere
//     import of what exists to run processes or code (subprocess,
//     importlib, runpy, pty; from os import system).
//   - JavaScript (javascript.go): eval, the Function constructor,
//     child_process (its require or import alone blocks) through
//     require/import aliases and destructuring, vm,
//     fs writes and deletions, net/http, decoded payloads.
//   - shell (shell.go): rm -rf, curl|sh, eval, dd, mkfs, chmod 777, writes
//     to /etc, reverse shells, fork bombs, command substitution.
//
// Every finding has a rule id (Rules lists the catalogue), a severity, a
// 1-based line and column (in characters) and a snippet. Verify answers
// BLOCKED with QWED-SEC-002 when a finding is critical or high, VERIFIED
// with the findings otherwise. ClassifyExecution gives the gate the
// verdict on an execute_code action (status, risk, security violation).
//
// The analysis over-approximates on purpose (fail closed): a name that
// may hold a dangerous value is treated as holding it, and code the
// engine cannot parse or bound is never VERIFIED. The package is pure:
// no IO, no clock, no randomness, and its work is bounded by step
// budgets, so the same input gives the same outcome byte for byte.
package code
