package a2a

import (
	"encoding/json"
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

// CodePatternNames lists code_guard's pattern names, sorted:
//
//   - __import__: __import__( — any dynamic import;
//   - compile: compile( or builtins.compile(, not a method such as
//     re.compile( (the builtin compiles source to code objects; a regular
//     expression's compile does not);
//   - eval: eval( — any call of a function or method named eval;
//   - exec: exec( — likewise;
//   - importlib: importlib. and importlib named in an import statement
//     (import importlib, from importlib import ...);
//   - os.popen: os.popen( and from os import ... popen;
//   - os.system: os.system( and from os import ... system;
//   - subprocess: subprocess. (subprocess.run, .Popen, ...), subprocess
//     named in an import statement (import subprocess, import subprocess
//     as sp, import os, subprocess, from subprocess import ...), and
//     __import__("subprocess") / import_module("subprocess").
//
// Names are matched as words in any ASCII case, with any white space
// between tokens (os . system (x) is os.system(x); a line continuation
// and a comment, Python's or JavaScript's, count as white space); a word that only
// contains a name is not the name (evaluate(), executor.run(),
// my_subprocess.run() and print("evaluate") pass). An import statement
// runs to the end of its line (a backslash or an open bracket continues
// it) or to a semicolon.
func CodePatternNames() []string {
	return append([]string(nil), codePatternNames[:]...)
}

// CodeGuard is code_guard (QWED A2A "Engines"): it scans code for the
// dangerous patterns (see CodePatternNames) and blocks it, with the code
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
	// eval, ſubprocess is subprocess. Non-ASCII code is matched in that
	// form.
	if !isASCII(code) {
		code = norm.NFKC.String(code)
	}
	var found []string
	if bits := scanCode(code); bits != 0 {
		for i, name := range codePatternNames {
			if bits&(1<<i) != 0 {
				found = append(found, name)
			}
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
