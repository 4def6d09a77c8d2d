package code

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The JavaScript analyser: the Python design on JavaScript's tree. The
// binding pass builds the alias table from require() and import
// (const cp = require('child_process'); const {exec: run} =
// require('node:child_process'); import * as cp from 'child_process';
// import {execSync as x} from …) and assignments; the findings pass
// resolves callees to canonical names (cp.exec → child_process.exec,
// globalThis['ev'+'al'] → global.eval) and applies the rules below.

var (
	jsExec     = rule("JS-EXEC-001", SevCritical, "execution", "eval of code not known statically, or a string handed to setTimeout/setInterval")
	jsFunction = rule("JS-EXEC-002", SevCritical, "execution", "the Function constructor (new Function, Function(), x.constructor.constructor)")
	jsVM       = rule("JS-EXEC-003", SevHigh, "execution", "vm module, or require/import of a module named at run time")
	jsEvalK    = rule("JS-EXEC-004", SevHigh, "execution", "eval of a constant string whose own analysis found nothing blocking: dynamic execution all the same")
	jsProc     = rule("JS-PROC-001", SevCritical, "process", "child_process (exec, execSync, spawn, fork, execFile)")
	jsNative   = rule("JS-NATIVE-001", SevCritical, "native", "process.binding / process.dlopen: native code")
	jsProcCtl  = rule("JS-PROC-002", SevHigh, "process", "process.kill / process.setuid")
	jsFileW    = rule("JS-FILE-001", SevMedium, "file", "file write (fs.writeFile, appendFile, createWriteStream, mkdir, rename, copy)")
	jsFileD    = rule("JS-FILE-002", SevHigh, "file", "file deletion (fs.unlink, fs.rm, fs.rmdir); critical on a system root")
	jsFileP    = rule("JS-FILE-003", SevMedium, "file", "permission change (fs.chmod, fs.chown)")
	jsFileS    = rule("JS-FILE-004", SevHigh, "file", "access to a sensitive path (credentials, system directories)")
	jsNet      = rule("JS-NET-001", SevMedium, "network", "network access (net, http, https, dgram, tls, fetch, XMLHttpRequest, WebSocket)")
	jsObf      = rule("JS-OBF-001", SevHigh, "obfuscation", "dynamic lookup of a dangerous name on the global object, process or a module")
	jsPayload  = rule("JS-OBF-002", SevCritical, "obfuscation", "decoded payload (atob, Buffer.from(…, 'base64'|'hex')) passed to eval or Function")
	jsDOM      = rule("JS-DOM-001", SevMedium, "injection", "HTML injection sink (document.write, innerHTML, outerHTML, insertAdjacentHTML)")
	jsImport   = rule("JS-IMPORT-001", SevInfo, "import", "require/import of fs, net or http")
	jsImportR  = rule("JS-IMPORT-002", SevHigh, "import", "require/import of a module that exists to run processes or code (child_process, vm)")
	jsEnv      = rule("JS-ENV-001", SevLow, "environment", "process.env access (may read secrets)")
	jsQualLoop = rule("JS-QUAL-001", SevLow, "quality", "while (true) without break")
)

var jsCalls = map[string]string{
	"process.binding": jsNative, "process.dlopen": jsNative, "process._linkedBinding": jsNative,
	"process.kill": jsProcCtl, "process.setuid": jsProcCtl, "process.setgid": jsProcCtl, "process.abort": jsProcCtl,
	"global.fetch": jsNet, "global.XMLHttpRequest": jsNet, "global.WebSocket": jsNet, "global.EventSource": jsNet,
	"document.write": jsDOM, "document.writeln": jsDOM,
}

var jsPrefixes = []struct{ prefix, rule string }{
	{"child_process.", jsProc}, {"vm.", jsVM},
	{"net.", jsNet}, {"http.", jsNet}, {"https.", jsNet}, {"http2.", jsNet}, {"dgram.", jsNet}, {"tls.", jsNet},
	{"axios", jsNet}, {"node-fetch", jsNet}, {"request.", jsNet},
}

var jsFSRules = map[string]string{
	"writeFile": jsFileW, "writeFileSync": jsFileW, "appendFile": jsFileW, "appendFileSync": jsFileW,
	"createWriteStream": jsFileW, "mkdir": jsFileW, "mkdirSync": jsFileW, "rename": jsFileW, "renameSync": jsFileW,
	"copyFile": jsFileW, "copyFileSync": jsFileW, "cp": jsFileW, "cpSync": jsFileW, "symlink": jsFileW, "symlinkSync": jsFileW,
	"truncate": jsFileW, "truncateSync": jsFileW,
	"unlink": jsFileD, "unlinkSync": jsFileD, "rm": jsFileD, "rmSync": jsFileD, "rmdir": jsFileD, "rmdirSync": jsFileD,
	"chmod": jsFileP, "chmodSync": jsFileP, "chown": jsFileP, "chownSync": jsFileP,
	"readFile": "", "readFileSync": "", "createReadStream": "",
}

var jsGlobals = map[string]bool{
	"eval": true, "Function": true, "setTimeout": true, "setInterval": true, "setImmediate": true, "require": true,
	"atob": true, "fetch": true, "XMLHttpRequest": true, "WebSocket": true, "EventSource": true,
}

var jsGlobalObjects = map[string]bool{"globalThis": true, "window": true, "global": true, "self": true, "this": true}

var jsRiskyModules = map[string]bool{
	"child_process": true, "vm": true, "fs": true, "net": true, "http": true, "https": true, "dgram": true, "tls": true, "http2": true,
}

// jsRunModules are the modules that exist to run processes or code:
// requiring or importing one at all is JS-IMPORT-002, as the QWED A2A
// code_guard blocks any mention of a process or an evaluator.
var jsRunModules = map[string]bool{"child_process": true, "vm": true}

// jsModuleRule is the rule of requiring or importing the canonical module
// m: JS-IMPORT-002 for a module of jsRunModules, JS-IMPORT-001 for the
// other risky modules, "" for the rest.
func jsModuleRule(m string) string {
	switch {
	case jsRunModules[m]:
		return jsImportR
	case jsRiskyModules[m]:
		return jsImport
	}
	return ""
}

func canonJSModule(m string) string {
	m = strings.TrimPrefix(m, "node:")
	if m == "fs/promises" {
		return "fs"
	}
	return m
}

// canonJS canonicalises global.X for known globals and Buffer/String.
func canonJS(name string) string {
	if rest, ok := strings.CutPrefix(name, "global."); ok {
		first, _, _ := strings.Cut(rest, ".")
		if jsGlobalObjects[first] {
			return canonJS("global." + strings.TrimPrefix(strings.TrimPrefix(rest, first), "."))
		}
		switch first {
		case "process", "Buffer", "String", "document", "console", "JSON":
			return rest
		}
	}
	if name == "module.require" {
		return "global.require" // CommonJS: module.require is require
	}
	return strings.TrimSuffix(name, ".")
}

func jsRuleFor(name string) string {
	if r, ok := jsCalls[name]; ok {
		return r
	}
	if rest, ok := strings.CutPrefix(name, "fs."); ok {
		rest = strings.TrimPrefix(rest, "promises.")
		if r := jsFSRules[rest]; r != "" {
			return r
		}
		return ""
	}
	for _, p := range jsPrefixes {
		if rest, ok := strings.CutPrefix(name, p.prefix); ok && !strings.Contains(rest, "(") {
			return p.rule
		}
	}
	return ""
}

type jsAnalyser struct {
	pyAnalyser // shares the value machinery, the budget and the reporter
}

func analyseJS(p *parsed, rep *reporter, quality bool, budget *int) (map[string]string, error) {
	return analyseJSAt(p, rep, quality, 0, budget)
}

func analyseJSAt(p *parsed, rep *reporter, quality bool, depth int, budget *int) (map[string]string, error) {
	a := &jsAnalyser{pyAnalyser{src: p.src, rep: rep, quality: quality, depth: depth, budget: budget,
		env: map[string][]value{}, imports: map[string]string{}}}
	for round := 0; round < MaxFixpointRounds; round++ {
		a.changed = false
		a.jbind(p.root)
		if !a.changed || a.exceeded {
			break
		}
	}
	a.memo = map[*node][]value{}
	a.jcheck(p.root)
	if a.exceeded {
		return nil, &limitError{limit: "steps", max: MaxSteps, found: MaxSteps + 1}
	}
	return a.imports, nil
}

func jname(s string) value { return value{kind: vName, s: canonJS(s)} }

func (a *jsAnalyser) jbind(n *node) {
	if !a.step() {
		return
	}
	switch n.kind {
	case "variable_declarator":
		if nm, v := n.child("name"), n.child("value"); nm != nil && v != nil {
			a.bindPattern(nm, a.jeval(v))
		}
	case "assignment_expression":
		if l, r := n.child("left"), n.child("right"); l != nil && r != nil && (l.kind == "identifier" || l.kind == "object_pattern") {
			a.bindPattern(l, a.jeval(r))
		}
	case "import_statement":
		src := n.child("source")
		if src == nil {
			break
		}
		s, ok := a.jsString(src)
		if !ok {
			break
		}
		m := canonJSModule(s)
		for _, c := range n.children {
			if c.kind != "import_clause" {
				continue
			}
			for _, d := range c.children {
				switch d.kind {
				case "identifier":
					a.bindAlias(d.text(a.src), m)
				case "namespace_import":
					if id := firstIdent(d); id != nil {
						a.bindAlias(id.text(a.src), m)
					}
				case "named_imports":
					for _, sp := range d.children {
						if sp.kind != "import_specifier" {
							continue
						}
						nm, al := sp.child("name"), sp.child("alias")
						if nm == nil {
							continue
						}
						local := nm
						if al != nil {
							local = al
						}
						a.bindAlias(local.text(a.src), m+"."+strings.Trim(nm.text(a.src), `'"`))
					}
				}
			}
		}
	}
	for _, c := range n.children {
		a.jbind(c)
	}
}

func (a *jsAnalyser) bindAlias(local, canonical string) {
	if _, had := a.imports[local]; !had {
		a.imports[local] = canonical
	}
	a.bindName(local, []value{jname(canonical)})
}

// bindPattern binds an identifier or a destructuring pattern
// ({exec, spawn: s} = cp).
func (a *jsAnalyser) bindPattern(p *node, vals []value) {
	switch p.kind {
	case "identifier":
		a.bindName(p.text(a.src), vals)
	case "object_pattern":
		for _, c := range p.children {
			switch c.kind {
			case "shorthand_property_identifier_pattern":
				a.bindName(c.text(a.src), a.attrs(vals, c.text(a.src)))
			case "pair_pattern":
				k, v := c.child("key"), c.child("value")
				if k != nil && v != nil && v.kind == "identifier" {
					key := k.text(a.src)
					if k.kind == "string" {
						key, _ = a.jsString(k)
					}
					a.bindName(v.text(a.src), a.attrs(vals, key))
				}
			}
		}
	}
}

func (a *jsAnalyser) attrs(vals []value, attr string) []value {
	var out []value
	for _, v := range vals {
		switch v.kind {
		case vName:
			out = addVal(out, jname(v.s+"."+attr))
		case vPayload:
			out = addVal(out, v)
		}
	}
	return out
}

func (a *jsAnalyser) jeval(n *node) []value {
	if n == nil || !a.step() {
		return nil
	}
	if a.memo != nil {
		if v, ok := a.memo[n]; ok {
			return v
		}
	}
	v := a.jevalUncached(n)
	if a.memo != nil {
		a.memo[n] = v
	}
	return v
}

func (a *jsAnalyser) jevalUncached(n *node) []value {
	switch n.kind {
	case "identifier", "this":
		name := n.text(a.src)
		vals := append([]value(nil), a.env[name]...)
		if jsGlobals[name] {
			vals = addVal(vals, jname("global."+name))
		}
		if jsGlobalObjects[name] {
			vals = addVal(vals, jname("global"))
		}
		switch name {
		case "process", "Buffer", "String", "document", "module":
			vals = addVal(vals, jname(name))
		}
		return vals
	case "member_expression":
		if p := n.child("property"); p != nil {
			return a.attrs(a.jeval(n.child("object")), p.text(a.src))
		}
	case "subscript_expression":
		var out []value
		for _, k := range strsOf(a.jeval(n.child("index"))) {
			out = union(out, a.attrs(a.jeval(n.child("object")), k.s))
		}
		return out
	case "string":
		if s, ok := a.jsString(n); ok {
			return []value{{kind: vStr, s: s}}
		}
	case "template_string":
		if s, ok := a.jsTemplate(n); ok {
			return []value{{kind: vStr, s: s}}
		}
	case "binary_expression":
		if op := n.child("operator"); op != nil && op.text(a.src) == "+" {
			return a.concat(a.jeval(n.child("left")), a.jeval(n.child("right")))
		}
	case "parenthesized_expression", "await_expression":
		for _, c := range n.namedChildren() {
			return a.jeval(c)
		}
	case "sequence_expression":
		nc := n.namedChildren()
		if len(nc) > 0 {
			return a.jeval(nc[len(nc)-1])
		}
	case "ternary_expression":
		return union(a.jeval(n.child("consequence")), a.jeval(n.child("alternative")))
	case "call_expression":
		return a.jevalCall(n)
	case "new_expression":
		var out []value
		for _, c := range names(a.jeval(n.child("constructor"))) {
			out = addVal(out, jname(c+"()"))
		}
		return out
	}
	return nil
}

func jsArgs(n *node) []*node {
	args := n.child("arguments")
	if args == nil {
		return nil
	}
	var out []*node
	for _, c := range args.namedChildren() {
		if c.kind != "comment" {
			out = append(out, c)
		}
	}
	return out
}

func nth(args []*node, i int) *node {
	if i < len(args) {
		return args[i]
	}
	return nil
}

func (a *jsAnalyser) jevalCall(n *node) []value {
	fn := n.child("function")
	if fn == nil {
		return nil
	}
	args := jsArgs(n)
	var out []value
	if fn.kind == "import" { // import('child_process')
		for _, s := range strsOf(a.jeval(nth(args, 0))) {
			out = addVal(out, jname(canonJSModule(s.s)))
		}
		return out
	}
	if fn.kind == "member_expression" {
		if p := fn.child("property"); p != nil {
			for _, v := range a.jeval(fn.child("object")) {
				out = union(out, a.jmethod(v, p.text(a.src), args))
			}
		}
	}
	for _, c := range names(a.jeval(fn)) {
		switch c {
		case "global.require":
			for _, s := range strsOf(a.jeval(nth(args, 0))) {
				out = addVal(out, jname(canonJSModule(s.s)))
			}
		case "global.atob":
			out = union(out, a.jdecode(nth(args, 0), "base64"))
		case "Buffer.from":
			enc := "utf8"
			if e := strsOf(a.jeval(nth(args, 1))); len(e) == 1 {
				enc = e[0].s
			}
			if enc == "base64" || enc == "hex" {
				out = union(out, a.jdecode(nth(args, 0), enc))
			} else {
				out = union(out, a.jeval(nth(args, 0)))
			}
		case "String.fromCharCode":
			var b strings.Builder
			ok := true
			for _, arg := range args {
				v, err := strconv.ParseInt(arg.text(a.src), 0, 32)
				if arg.kind != "number" || err != nil || v < 0 || v > utf8.MaxRune {
					ok = false
					break
				}
				b.WriteRune(rune(v))
			}
			if ok && b.Len() <= MaxFoldedString {
				out = addVal(out, value{kind: vStr, s: b.String()})
			}
		default:
			out = addVal(out, jname(c+"()"))
		}
	}
	return out
}

// jmethod folds string methods (split(”).reverse().join(”), toLowerCase,
// concat, toString of a payload).
func (a *jsAnalyser) jmethod(v value, m string, args []*node) []value {
	switch v.kind {
	case vPayload:
		return []value{v}
	case vStr:
		switch m {
		case "toLowerCase":
			return []value{{kind: vStr, s: strings.ToLower(v.s), decoded: v.decoded}}
		case "toUpperCase":
			return []value{{kind: vStr, s: strings.ToUpper(v.s), decoded: v.decoded}}
		case "toString", "trim", "valueOf":
			return []value{v}
		case "concat":
			out := []value{v}
			for _, arg := range args {
				out = a.concat(out, a.jeval(arg))
			}
			return out
		case "split":
			if seps := strsOf(a.jeval(nth(args, 0))); len(seps) == 1 && seps[0].s == "" {
				return []value{{kind: vStr, s: "\x00split\x00" + v.s, decoded: v.decoded}}
			}
		case "reverse":
			if rest, ok := strings.CutPrefix(v.s, "\x00split\x00"); ok {
				rs := []rune(rest)
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				return []value{{kind: vStr, s: "\x00split\x00" + string(rs), decoded: v.decoded}}
			}
		case "join":
			if rest, ok := strings.CutPrefix(v.s, "\x00split\x00"); ok {
				if seps := strsOf(a.jeval(nth(args, 0))); len(seps) == 1 {
					chars := strings.Split(rest, "")
					if s := strings.Join(chars, seps[0].s); len(s) <= MaxFoldedString {
						return []value{{kind: vStr, s: s, decoded: v.decoded}}
					}
				}
			}
		}
	}
	return nil
}

func (a *jsAnalyser) jdecode(arg *node, enc string) []value {
	ins := strsOf(a.jeval(arg))
	if len(ins) == 0 {
		return []value{{kind: vPayload}}
	}
	var out []value
	for _, in := range ins {
		var res []byte
		var err error
		if enc == "hex" {
			res, err = hexDecode(in.s)
		} else {
			res, err = decodeBase64(in.s, base64.StdEncoding)
		}
		if err != nil || !utf8.Valid(res) || len(res) > MaxFoldedString {
			out = addVal(out, value{kind: vPayload})
			continue
		}
		out = addVal(out, value{kind: vStr, s: string(res), decoded: true})
	}
	return out
}

// jsString folds a string literal.
func (a *jsAnalyser) jsString(n *node) (string, bool) {
	var b strings.Builder
	for _, c := range n.children {
		switch c.kind {
		case "string_fragment":
			b.WriteString(c.text(a.src))
		case "escape_sequence":
			s, ok := unescapePy(c.text(a.src))
			if !ok {
				return "", false
			}
			b.WriteString(s)
		case "html_character_reference":
			return "", false
		}
	}
	return b.String(), b.Len() <= MaxFoldedString
}

func (a *jsAnalyser) jsTemplate(n *node) (string, bool) {
	var b strings.Builder
	for _, c := range n.children {
		switch c.kind {
		case "string_fragment":
			b.WriteString(c.text(a.src))
		case "escape_sequence":
			s, ok := unescapePy(c.text(a.src))
			if !ok {
				return "", false
			}
			b.WriteString(s)
		case "template_substitution":
			nc := c.namedChildren()
			if len(nc) != 1 {
				return "", false
			}
			vs := strsOf(a.jeval(nc[0]))
			if len(vs) != 1 {
				return "", false
			}
			b.WriteString(vs[0].s)
		}
	}
	return b.String(), b.Len() <= MaxFoldedString
}

// ---- findings

var jsReferenceContexts = map[string]bool{
	"arguments": true, "array": true, "return_statement": true, "pair": true, "arrow_function": true,
	"ternary_expression": true, "spread_element": true,
}

func (a *jsAnalyser) jcheck(n *node) {
	if !a.step() {
		return
	}
	switch n.kind {
	case "call_expression":
		a.jcheckCall(n, false)
	case "new_expression":
		a.jcheckCall(n, true)
	case "subscript_expression":
		a.jcheckLookup(n)
	case "assignment_expression":
		if l := n.child("left"); l != nil && l.kind == "member_expression" {
			if p := l.child("property"); p != nil && (p.text(a.src) == "innerHTML" || p.text(a.src) == "outerHTML") {
				a.rep.add(jsDOM, n, "assignment to "+p.text(a.src))
			}
		}
	case "member_expression":
		if !(n.parent != nil && n.parent.kind == "member_expression" && n.field == "object") {
			for _, name := range names(a.jeval(n)) {
				if name == "process.env" || strings.HasPrefix(name, "process.env.") {
					a.rep.add(jsEnv, n, "access to "+name)
				}
			}
		}
	case "import_statement":
		if src := n.child("source"); src != nil {
			if s, ok := a.jsString(src); ok {
				if r := jsModuleRule(canonJSModule(s)); r != "" {
					a.rep.add(r, n, "import of "+canonJSModule(s))
				}
			}
		}
	case "while_statement":
		if c := n.child("condition"); a.quality && c != nil && strings.Trim(c.text(a.src), "() ") == "true" && !jsHasBreak(n.child("body")) {
			a.rep.add(jsQualLoop, n, "while (true) without break never ends by itself")
		}
	}
	if p := n.parent; p != nil && jsReferenceContexts[p.kind] && n.field != "parameters" &&
		(n.kind == "identifier" || n.kind == "member_expression" || n.kind == "subscript_expression") {
		if !(p.kind == "arrow_function" && n.field != "body") {
			for _, name := range names(a.jeval(n)) {
				if r := jsDangerous(name); r != "" {
					a.rep.add(r, n, name+" used as a value (called indirectly)")
				}
			}
		}
	}
	for _, c := range n.children {
		a.jcheck(c)
	}
}

func jsDangerous(name string) string {
	switch name {
	case "global.eval":
		return jsExec
	case "global.Function":
		return jsFunction
	}
	if r := jsRuleFor(name); r != "" && blocking(rules[r].Severity) {
		return r
	}
	return ""
}

func (a *jsAnalyser) jcheckCall(n *node, isNew bool) {
	field := "function"
	if isNew {
		field = "constructor"
	}
	fn := n.child(field)
	if fn == nil {
		return
	}
	args := jsArgs(n)
	written := fn.text(a.src)
	if fn.kind == "import" {
		mods := strsOf(a.jeval(nth(args, 0)))
		if len(mods) == 0 {
			a.rep.add(jsVM, n, "import() of a module named at run time")
		}
		for _, m := range mods {
			if r := jsModuleRule(canonJSModule(m.s)); r != "" {
				a.rep.add(r, n, "import() of "+canonJSModule(m.s))
			}
		}
	}
	// x.constructor.constructor(…) reaches Function from any object.
	if fn.kind == "member_expression" {
		if p, o := fn.child("property"), fn.child("object"); p != nil && o != nil && p.text(a.src) == "constructor" && o.kind == "member_expression" {
			if p2 := o.child("property"); p2 != nil && p2.text(a.src) == "constructor" {
				a.rep.add(jsFunction, n, "constructor.constructor reaches the Function constructor")
			}
		}
	}
	for _, c := range names(a.jeval(fn)) {
		how := writtenAs(c, written)
		if strings.HasPrefix(c, "global.") && writtenAs(strings.TrimPrefix(c, "global."), written) == "" {
			how = ""
		}
		switch c {
		case "global.eval":
			a.jcheckEval(n, "eval", how, nth(args, 0))
		case "global.Function":
			if len(args) == 0 {
				break
			}
			a.jcheckEval(n, "Function", how, args[len(args)-1])
			a.rep.add(jsFunction, n, "the Function constructor builds code at run time"+how)
		case "global.setTimeout", "global.setInterval", "global.setImmediate":
			if arg := nth(args, 0); arg != nil && arg.kind != "arrow_function" && arg.kind != "function_expression" && arg.kind != "identifier" && arg.kind != "member_expression" {
				a.rep.add(jsExec, n, strings.TrimPrefix(c, "global.")+" with a string evaluates it as code")
			}
		case "global.require":
			mods := strsOf(a.jeval(nth(args, 0)))
			if len(mods) == 0 {
				a.rep.add(jsVM, n, "require() of a module named at run time")
			}
			for _, m := range mods {
				if r := jsModuleRule(canonJSModule(m.s)); r != "" {
					a.rep.add(r, n, "require of "+canonJSModule(m.s))
				}
			}
		default:
			if rest, ok := strings.CutPrefix(c, "fs."); ok {
				if r, known := jsFSRules[strings.TrimPrefix(rest, "promises.")]; known && r == "" {
					for _, p := range strsOf(a.jeval(nth(args, 0))) {
						if why := sensitivePath(p.s, false); why != "" {
							a.rep.add(jsFileS, n, c+" of "+p.s+": "+why)
						}
					}
				}
			}
			r := jsRuleFor(c)
			if r == "" {
				continue
			}
			sev := rules[r].Severity
			msg := "call to " + c + how
			if strings.HasPrefix(c, "fs.") {
				for _, p := range strsOf(a.jeval(nth(args, 0))) {
					if r == jsFileD && rootLike(p.s) {
						sev, msg = SevCritical, msg+" on "+p.s+", a system root"
					} else if why := sensitivePath(p.s, r != ""); why != "" {
						a.rep.add(jsFileS, n, c+" on "+p.s+": "+why)
					}
				}
			}
			a.rep.addSev(r, sev, n, msg)
		}
	}
}

func (a *jsAnalyser) jcheckEval(n *node, fname, how string, arg *node) {
	if arg == nil {
		return
	}
	vals := a.jeval(arg)
	unknown := len(vals) == 0
	for _, v := range vals {
		switch {
		case v.kind == vPayload:
			a.rep.add(jsPayload, n, fname+" of decoded data"+how)
		case v.kind == vStr:
			blocked := a.jnested(v.s, n, fname)
			if v.decoded {
				a.rep.add(jsPayload, n, fname+" of a statically decoded payload"+how)
			} else if !blocked && fname == "eval" {
				a.rep.add(jsEvalK, n, "eval of a constant string; its code was analysed"+how)
			}
		default:
			unknown = true
		}
	}
	if unknown && fname == "eval" {
		a.rep.add(jsExec, n, "eval of code not known statically"+how)
	}
}

func (a *jsAnalyser) jnested(code string, at *node, fname string) bool {
	if a.depth >= MaxPayloadDepth {
		a.rep.add(jsExec, at, fname+" of code nested deeper than "+itoa(MaxPayloadDepth)+" levels")
		return true
	}
	p, err := parse(grammarFor(langJavaScript), code)
	if err != nil {
		a.rep.add(jsExec, at, fname+" of a string that cannot be analysed: "+err.Error())
		return true
	}
	savedAt, savedPrefix := a.rep.at, a.rep.prefix
	if a.rep.at == nil {
		a.rep.at = at
	}
	a.rep.prefix += "in code passed to " + fname + ": "
	before := a.rep.blocking
	if _, err := analyseJSAt(p, a.rep, a.quality, a.depth+1, a.budget); err != nil {
		a.exceeded = true
	}
	found := a.rep.blocking > before
	a.rep.at, a.rep.prefix = savedAt, savedPrefix
	return found
}

func (a *jsAnalyser) jcheckLookup(n *node) {
	if n.field == "left" && n.parent != nil && n.parent.kind == "assignment_expression" {
		return
	}
	objs := a.jeval(n.child("object"))
	ns := false
	for _, o := range objs {
		if o.kind == vName && (o.s == "global" || o.s == "process" || jsRiskyModules[o.s]) {
			ns = true
		}
	}
	if !ns {
		return
	}
	keys := strsOf(a.jeval(n.child("index")))
	if len(keys) == 0 {
		a.rep.add(jsObf, n, "lookup of a computed name on the global object, process or a module")
		return
	}
	for _, name := range names(a.jeval(n)) {
		if jsDangerous(name) != "" {
			a.rep.add(jsObf, n, "lookup resolves to "+name)
		}
	}
}

func jsHasBreak(n *node) bool {
	if n == nil {
		return false
	}
	for _, c := range n.children {
		switch c.kind {
		case "break_statement", "return_statement", "throw_statement":
			return true
		case "while_statement", "for_statement", "for_in_statement", "do_statement", "function_declaration", "function_expression", "arrow_function":
			continue
		}
		if jsHasBreak(c) {
			return true
		}
	}
	return false
}

func hexDecode(s string) ([]byte, error) {
	s = stripSpace(s)
	if len(s)%2 != 0 {
		return nil, errNotStatic
	}
	out := make([]byte, len(s)/2)
	for i := 0; i < len(s); i += 2 {
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			return nil, errNotStatic
		}
		out[i/2] = byte(v)
	}
	return out, nil
}
