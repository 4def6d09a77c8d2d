package a2a

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxLanguageBytes bounds a code payload's language.
const MaxLanguageBytes = 64

// The reasons of a forwarded code payload.
const (
	reasonNoCode      = "No code to verify"
	reasonNoDangerous = "No dangerous patterns found in code"
)

// codePattern is one of code_guard's dangerous patterns: its name (as
// verdicts list it) and its regular expression.
type codePattern struct {
	name string
	// key is a word every match holds (in some case): ASCII code without
	// it cannot match, and is not run through re.
	key string
	re  *regexp.Regexp
}

// codePatterns are code_guard's patterns, compiled once, sorted by name.
// They are RE2 expressions (Go's regexp): matching is linear in the code's
// length, whatever the code. Each is case-insensitive and tolerates white
// space where Python does, and matches a call, an attribute access or an
// import, not a word inside an identifier or a string (evaluate(),
// executor.run(), my_subprocess.run() and print("eval") pass):
//
//   - __import__: __import__( — any dynamic import;
//   - compile: compile( or builtins.compile(, not a method such as
//     re.compile( (the builtin compiles source to code objects; a regular
//     expression's compile does not);
//   - eval: eval( — any call of a function or method named eval;
//   - exec: exec( — likewise;
//   - importlib: importlib., import importlib, from importlib;
//   - os.popen: os.popen( and from os import ... popen;
//   - os.system: os.system( and from os import ... system;
//   - subprocess: subprocess. (subprocess.run, .Popen, ...), import
//     subprocess (also as an alias, import subprocess as sp, and in a list,
//     import os, subprocess), from subprocess import, and
//     __import__("subprocess") / import_module("subprocess").
var codePatterns = []codePattern{
	{"__import__", "__import__", regexp.MustCompile(`(?i)__import__\s*\(`)},
	{"compile", "compile", regexp.MustCompile(`(?i)(?:^|[^\w.])compile\s*\(|\bbuiltins\s*\.\s*compile\s*\(`)},
	{"eval", "eval", regexp.MustCompile(`(?i)\beval\s*\(`)},
	{"exec", "exec", regexp.MustCompile(`(?i)\bexec\s*\(`)},
	{"importlib", "importlib", regexp.MustCompile(`(?i)\bimportlib\s*\.|\bimport\s+importlib\b|\bfrom\s+importlib\b`)},
	{"os.popen", "popen", regexp.MustCompile(`(?i)\bos\s*\.\s*popen\s*\(|\bfrom\s+os\s+import\b[^\n;]*\bpopen\b`)},
	{"os.system", "system", regexp.MustCompile(`(?i)\bos\s*\.\s*system\s*\(|\bfrom\s+os\s+import\b[^\n;]*\bsystem\b`)},
	{"subprocess", "subprocess", regexp.MustCompile(`(?i)\bsubprocess\s*\.|\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*subprocess\b|\bfrom\s+subprocess\s+import\b|(?:__import__|import_module)\s*\(\s*['"]subprocess\b`)},
}

// CodePatternNames lists code_guard's pattern names, sorted.
func CodePatternNames() []string {
	names := make([]string, len(codePatterns))
	for i, p := range codePatterns {
		names[i] = p.name
	}
	return names
}

// CodeGuard is code_guard (QWED A2A "Engines"): it scans code for the
// dangerous patterns (see codePatterns) and blocks it, with the code
// CodeDangerousCode and the reason "Dangerous code patterns detected:
// eval, subprocess", when any matches; Patterns lists the names matched,
// sorted. Empty code is forwarded ("No code to verify"). Code over
// MaxCodeBytes is refused with a Problem (see Result).
func CodeGuard(code string) Result {
	if code == "" {
		return Result{Engine: EngineCode, Reason: reasonNoCode}
	}
	if len(code) > MaxCodeBytes {
		return refused(EngineCode, tooLong("payload.code", len(code), MaxCodeBytes, "bytes"))
	}
	// Python reads identifiers in their NFKC form (PEP 3131): ｅｖａｌ is
	// eval. Non-ASCII code is matched in that form.
	ascii := isASCII(code)
	if !ascii {
		code = norm.NFKC.String(code)
		ascii = isASCII(code)
	}
	var lower []byte
	if ascii {
		lower = asciiLower(code)
	}
	var found []string
	for _, p := range codePatterns {
		if ascii && !bytes.Contains(lower, []byte(p.key)) {
			continue
		}
		if p.re.MatchString(code) {
			found = append(found, p.name)
		}
	}
	if len(found) == 0 {
		return Result{Engine: EngineCode, Reason: reasonNoDangerous}
	}
	return Result{Engine: EngineCode, Blocked: true, Code: CodeDangerousCode, Patterns: found,
		Reason: "Dangerous code patterns detected: " + strings.Join(found, ", ")}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower returns ASCII s in lower case.
func asciiLower(s string) []byte {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b
}

// CodeOf reads a code payload, {"code": "...", "language": "python"}:
// code "" when absent or null, language "" when absent or null. It
// refuses code or language that is not a string, code over MaxCodeBytes,
// language over MaxLanguageBytes, invalid UTF-8, a repeated member.
func CodeOf(payload json.RawMessage) (code, language string, p *Problem) {
	s := scanner{p: payload}
	var seenCode, seenLang bool
	if !s.begin('{', "payload", "an object") {
		return "", "", s.prob
	}
	for n := 0; ; n++ {
		name, esc, ok := s.member(n == 0, "payload")
		if !ok {
			break
		}
		switch {
		case s.nameIs(name, esc, "code"):
			if s.once(&seenCode, "payload.code", "payload", "code") {
				code = s.stringMember("payload.code", MaxCodeBytes)
			}
		case s.nameIs(name, esc, "language"):
			if s.once(&seenLang, "payload.language", "payload", "language") {
				language = s.stringMember("payload.language", MaxLanguageBytes)
			}
		default:
			s.skip("payload")
		}
		if s.prob != nil {
			break
		}
	}
	if !s.end() {
		return "", "", s.prob
	}
	return code, language, nil
}

// CodeGuardPayload is CodeGuard on a code payload's code (CodeOf); a
// payload CodeOf refuses is refused with its Problem.
func CodeGuardPayload(payload json.RawMessage) Result {
	code, _, p := CodeOf(payload)
	if p != nil {
		return refused(EngineCode, p)
	}
	return CodeGuard(code)
}
