package code

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Python analyser.
//
// It works on the syntax tree in two passes. The binding pass builds the
// alias table: imports (import subprocess as sp; from os import system as
// s; from subprocess import *), assignments (e = eval; x =
// base64.b64decode(…); name = 'ev' + 'al'), walrus, for-loops over
// literal lists and with … as. It is flow-insensitive and only ever adds:
// a name holds every value any assignment gives it (up to MaxValues), and
// the pass is repeated (MaxFixpointRounds) so that aliases defined after
// their use inside functions are found. The findings pass then resolves
// every call's callee to canonical names (sp.run → subprocess.run,
// __import__('os').system → os.system, getattr(__builtins__, 'ev'+'al') →
// builtins.eval, globals()['exec'] → builtins.exec) and applies the rules
// of pyrules.go. Constant strings are folded (concatenation, join, chr,
// slicing, f-strings, bytes literals) and statically decodable payloads
// (base64, base32, hex, rot13) are decoded; code handed to eval/exec as a
// constant or decoded string is parsed and analysed itself.
//
// It over-approximates: shadowing a builtin does not hide it, and a name
// that may hold a dangerous value is treated as holding it (fail closed).

type vkind uint8

const (
	vName    vkind = iota + 1 // a canonical dotted name: module, function, attribute, "X()" instance
	vStr                      // a constant string (decoded marks data that went through a decoder)
	vPayload                  // decoded data whose text is not known statically
	vDict                     // the namespace dict of a module ("__main__" for globals())
)

type value struct {
	kind    vkind
	s       string
	decoded bool
}

type pyAnalyser struct {
	src      string
	rep      *reporter
	quality  bool
	depth    int // payload nesting
	budget   *int
	exceeded bool
	env      map[string][]value
	wild     []string
	imports  map[string]string // bound name → canonical module or name
	changed  bool
	memo     map[*node][]value
}

// analysePython analyses src (already parsed) and reports into rep. It
// returns a *limitError when the step budget runs out.
func analysePython(p *parsed, rep *reporter, quality bool, depth int, budget *int) (map[string]string, error) {
	a := &pyAnalyser{
		src: p.src, rep: rep, quality: quality, depth: depth, budget: budget,
		env: map[string][]value{}, imports: map[string]string{},
	}
	for round := 0; round < MaxFixpointRounds; round++ {
		a.changed = false
		a.bind(p.root)
		if !a.changed || a.exceeded {
			break
		}
	}
	a.memo = map[*node][]value{}
	a.check(p.root)
	if a.exceeded {
		return nil, &limitError{limit: "steps", max: MaxSteps, found: MaxSteps + 1}
	}
	return a.imports, nil
}

// step charges one unit of work; false once the budget is spent.
func (a *pyAnalyser) step() bool {
	if a.exceeded {
		return false
	}
	*a.budget++
	if *a.budget > MaxSteps {
		a.exceeded = true
		return false
	}
	return true
}

// addVal adds v to set (deduplicated, bounded: when full, a name or
// payload replaces a plain string, never the other way round).
func addVal(set []value, v value) []value {
	for _, x := range set {
		if x == v {
			return set
		}
	}
	if len(set) < MaxValues {
		return append(set, v)
	}
	if v.kind == vStr && !v.decoded {
		return set
	}
	for i, x := range set {
		if x.kind == vStr && !x.decoded {
			set[i] = v
			return set
		}
	}
	return set
}

func union(a, b []value) []value {
	out := append([]value(nil), a...)
	for _, v := range b {
		out = addVal(out, v)
	}
	return out
}

func nameVal(s string) value { return value{kind: vName, s: canonPy(s)} }

// strsOf returns the constant strings of a set.
func strsOf(vals []value) []value {
	var out []value
	for _, v := range vals {
		if v.kind == vStr {
			out = append(out, v)
		}
	}
	return out
}

// ---- binding pass

func (a *pyAnalyser) bindName(name string, vals []value) {
	cur := a.env[name]
	next := union(cur, vals)
	if len(next) != len(cur) {
		a.changed = true
	} else {
		for i := range next {
			if next[i] != cur[i] {
				a.changed = true
				break
			}
		}
	}
	a.env[name] = next
}

func (a *pyAnalyser) bind(n *node) {
	if !a.step() {
		return
	}
	switch n.kind {
	case "import_statement":
		for _, c := range n.children {
			switch c.kind {
			case "dotted_name":
				first, _, _ := strings.Cut(c.text(a.src), ".")
				a.bindImport(first, canonPy(first))
			case "aliased_import":
				if name, alias := c.child("name"), c.child("alias"); name != nil && alias != nil {
					full := canonPy(name.text(a.src))
					a.bindImport(alias.text(a.src), full)
				}
			}
		}
		return
	case "import_from_statement":
		mod := n.child("module_name")
		if mod == nil || mod.kind != "dotted_name" {
			return // relative imports bind project modules
		}
		m := canonPy(mod.text(a.src))
		for _, c := range n.children {
			if c == mod {
				continue
			}
			switch {
			case c.kind == "wildcard_import":
				if !containsStr(a.wild, m) {
					a.wild = append(a.wild, m)
					sort.Strings(a.wild)
					a.changed = true
				}
			case c.field == "name" && c.kind == "dotted_name":
				a.bindImport(c.text(a.src), canonPy(m+"."+c.text(a.src)))
			case c.field == "name" && c.kind == "aliased_import":
				if name, alias := c.child("name"), c.child("alias"); name != nil && alias != nil {
					a.bindImport(alias.text(a.src), canonPy(m+"."+name.text(a.src)))
				}
			}
		}
		return
	case "assignment":
		a.bindAssign(n)
	case "augmented_assignment":
		if l, r := n.child("left"), n.child("right"); l != nil && r != nil && l.kind == "identifier" {
			if op := n.child("operator"); op == nil || op.text(a.src) == "+=" {
				a.bindName(l.text(a.src), a.concat(a.eval(l), a.eval(r)))
			}
		}
	case "named_expression":
		if nm, v := n.child("name"), n.child("value"); nm != nil && v != nil {
			a.bindName(nm.text(a.src), a.eval(v))
		}
	case "for_statement", "for_in_clause":
		if l, r := n.child("left"), n.child("right"); l != nil && r != nil && l.kind == "identifier" {
			a.bindName(l.text(a.src), a.elements(r))
		}
	case "as_pattern":
		if al := n.child("alias"); al != nil {
			if id := firstIdent(al); id != nil {
				for _, c := range n.children {
					if c.named && c.field != "alias" {
						a.bindName(id.text(a.src), a.eval(c))
						break
					}
				}
			}
		}
	}
	for _, c := range n.children {
		a.bind(c)
	}
}

func (a *pyAnalyser) bindImport(name, full string) {
	if _, had := a.imports[name]; !had {
		a.imports[name] = full
	}
	a.bindName(name, []value{nameVal(full)})
}

func firstIdent(n *node) *node {
	if n.kind == "identifier" {
		return n
	}
	for _, c := range n.children {
		if id := firstIdent(c); id != nil {
			return id
		}
	}
	return nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bindAssign binds a = b, a = b = c, a, b = x, y.
func (a *pyAnalyser) bindAssign(n *node) {
	l, r := n.child("left"), n.child("right")
	if l == nil || r == nil {
		return
	}
	for r.kind == "assignment" { // a = b = value: a takes the innermost value
		if rr := r.child("right"); rr != nil {
			r = rr
		} else {
			return
		}
	}
	switch l.kind {
	case "identifier":
		a.bindName(l.text(a.src), a.eval(r))
	case "pattern_list", "tuple_pattern", "list_pattern":
		ls := l.namedChildren()
		var rs []*node
		if r.kind == "expression_list" || r.kind == "tuple" || r.kind == "list" || r.kind == "pattern_list" {
			rs = r.namedChildren()
		}
		if len(ls) == len(rs) {
			for i, x := range ls {
				if x.kind == "identifier" {
					a.bindName(x.text(a.src), a.eval(rs[i]))
				}
			}
		}
	}
}

// elements returns the values a for-loop variable takes over a literal
// list, tuple or set (and nothing for anything else).
func (a *pyAnalyser) elements(n *node) []value {
	var out []value
	switch n.kind {
	case "list", "tuple", "set", "expression_list":
		for _, c := range n.namedChildren() {
			out = union(out, a.eval(c))
		}
	}
	return out
}

// ---- evaluation

// eval returns the possible values of an expression (nil when nothing is
// known about it).
func (a *pyAnalyser) eval(n *node) []value {
	if n == nil || !a.step() {
		return nil
	}
	if a.memo != nil {
		if v, ok := a.memo[n]; ok {
			return v
		}
	}
	v := a.evalUncached(n)
	if a.memo != nil {
		a.memo[n] = v
	}
	return v
}

func (a *pyAnalyser) evalUncached(n *node) []value {
	switch n.kind {
	case "identifier":
		return a.lookup(n.text(a.src))
	case "attribute":
		obj, attr := n.child("object"), n.child("attribute")
		if obj == nil || attr == nil {
			return nil
		}
		var out []value
		for _, v := range a.eval(obj) {
			if r, ok := attrOf(v, attr.text(a.src)); ok {
				out = addVal(out, r)
			}
		}
		return out
	case "call":
		return a.evalCall(n)
	case "subscript":
		return a.evalSubscript(n)
	case "string":
		if s, ok := a.pyString(n); ok {
			return []value{{kind: vStr, s: s}}
		}
		return nil
	case "concatenated_string":
		var out []value
		for i, c := range n.namedChildren() {
			if i == 0 {
				out = a.eval(c)
			} else {
				out = a.concat(out, a.eval(c))
			}
		}
		return out
	case "binary_operator":
		if op := n.child("operator"); op != nil && op.text(a.src) == "+" {
			return a.concat(a.eval(n.child("left")), a.eval(n.child("right")))
		}
		return nil
	case "parenthesized_expression", "await":
		for _, c := range n.namedChildren() {
			return a.eval(c)
		}
		return nil
	case "conditional_expression":
		var out []value
		for i, c := range n.namedChildren() {
			if i != 1 { // a if cond else b
				out = union(out, a.eval(c))
			}
		}
		return out
	case "boolean_operator":
		return union(a.eval(n.child("left")), a.eval(n.child("right")))
	case "named_expression":
		return a.eval(n.child("value"))
	}
	return nil
}

// lookup resolves a bare name: the alias table, then the builtins, then
// the wildcard imports.
func (a *pyAnalyser) lookup(name string) []value {
	vals := append([]value(nil), a.env[name]...)
	if pyBuiltins[name] {
		vals = addVal(vals, nameVal("builtins."+name))
	}
	if name == "__builtins__" || name == "__builtin__" {
		vals = addVal(vals, nameVal("builtins"))
	}
	if len(a.env[name]) == 0 {
		for _, m := range a.wild {
			if containsStr(pyModuleExports[m], name) || pyCalls[canonPy(m+"."+name)] != "" {
				vals = addVal(vals, nameVal(m+"."+name))
			}
		}
	}
	return vals
}

// attrOf resolves v.attr.
func attrOf(v value, attr string) (value, bool) {
	switch v.kind {
	case vName:
		if attr == "__dict__" {
			return value{kind: vDict, s: v.s}, true
		}
		return nameVal(v.s + "." + attr), true
	case vPayload:
		return v, true // payload.decode, payload.strip …: still the payload's methods
	}
	return value{}, false
}

// concat is + over two value sets: strings concatenate (every
// combination, bounded), a payload taints the result.
func (a *pyAnalyser) concat(l, r []value) []value {
	var out []value
	for _, x := range l {
		for _, y := range r {
			if !a.step() {
				return out
			}
			switch {
			case x.kind == vStr && y.kind == vStr:
				if len(x.s)+len(y.s) <= MaxFoldedString {
					out = addVal(out, value{kind: vStr, s: x.s + y.s, decoded: x.decoded || y.decoded})
				}
			case x.kind == vPayload || y.kind == vPayload || (x.kind == vStr && x.decoded) || (y.kind == vStr && y.decoded):
				out = addVal(out, value{kind: vPayload})
			}
		}
	}
	return out
}

// callArgs splits a call's arguments into positional nodes and keyword
// values.
func callArgs(n *node, src string) ([]*node, map[string]*node) {
	args := n.child("arguments")
	var pos []*node
	kw := map[string]*node{}
	if args == nil {
		return nil, kw
	}
	for _, c := range args.namedChildren() {
		switch c.kind {
		case "keyword_argument":
			if nm, v := c.child("name"), c.child("value"); nm != nil && v != nil {
				kw[nm.text(src)] = v
			}
		case "comment":
		default:
			pos = append(pos, c)
		}
	}
	return pos, kw
}

func argAt(pos []*node, kw map[string]*node, i int, name string) *node {
	if i < len(pos) && pos[i].kind != "list_splat" && pos[i].kind != "dictionary_splat" {
		return pos[i]
	}
	if name != "" {
		return kw[name]
	}
	return nil
}

func (a *pyAnalyser) evalCall(n *node) []value {
	fn := n.child("function")
	if fn == nil {
		return nil
	}
	pos, kw := callArgs(n, a.src)
	var out []value
	// Methods of constant strings and namespace dicts.
	if fn.kind == "attribute" {
		if obj, m := fn.child("object"), fn.child("attribute"); obj != nil && m != nil {
			for _, v := range a.eval(obj) {
				for _, r := range a.method(v, m.text(a.src), pos, kw) {
					out = addVal(out, r)
				}
			}
		}
	}
	for _, c := range a.eval(fn) {
		if c.kind != vName {
			continue
		}
		switch c.s {
		case "builtins.__import__":
			for _, s := range strsOf(a.eval(argAt(pos, kw, 0, "name"))) {
				first, _, _ := strings.Cut(s.s, ".")
				out = addVal(out, nameVal(first))
			}
		case "importlib.import_module":
			for _, s := range strsOf(a.eval(argAt(pos, kw, 0, "name"))) {
				out = addVal(out, nameVal(s.s))
			}
		case "builtins.getattr":
			names := strsOf(a.eval(argAt(pos, kw, 1, "")))
			for _, o := range a.eval(argAt(pos, kw, 0, "")) {
				for _, s := range names {
					if r, ok := attrOf(o, s.s); ok {
						out = addVal(out, r)
					}
				}
			}
		case "builtins.globals", "builtins.locals":
			out = addVal(out, value{kind: vDict, s: "__main__"})
		case "builtins.vars":
			if len(pos) == 0 {
				out = addVal(out, value{kind: vDict, s: "__main__"})
			}
			for _, o := range a.eval(argAt(pos, kw, 0, "")) {
				if o.kind == vName {
					out = addVal(out, value{kind: vDict, s: o.s})
				}
			}
		case "builtins.chr":
			if arg := argAt(pos, kw, 0, ""); arg != nil && arg.kind == "integer" {
				if r, err := strconv.ParseInt(arg.text(a.src), 0, 32); err == nil && r >= 0 && r <= utf8.MaxRune {
					out = addVal(out, value{kind: vStr, s: string(rune(r))})
				}
			}
		case "builtins.str", "builtins.bytes", "builtins.bytearray":
			arg := argAt(pos, kw, 0, "")
			if arg != nil && arg.kind == "list" && c.s != "builtins.str" {
				if s, ok := a.intList(arg); ok {
					out = addVal(out, value{kind: vStr, s: s})
				}
				continue
			}
			for _, v := range a.eval(arg) {
				if v.kind == vStr || v.kind == vPayload {
					out = addVal(out, v)
				}
			}
		default:
			if pyDecoders[c.s] {
				for _, v := range a.decode(c.s, pos, kw) {
					out = addVal(out, v)
				}
				continue
			}
			out = addVal(out, nameVal(c.s+"()"))
		}
	}
	return out
}

// method evaluates v.m(args) for constant strings, payloads and dicts.
func (a *pyAnalyser) method(v value, m string, pos []*node, kw map[string]*node) []value {
	switch v.kind {
	case vPayload:
		return []value{v}
	case vDict:
		if m == "get" || m == "__getitem__" || m == "pop" {
			var out []value
			for _, k := range strsOf(a.eval(argAt(pos, kw, 0, ""))) {
				out = union(out, a.dictGet(v, k.s))
			}
			return out
		}
	case vStr:
		s := v.s
		var r string
		switch m {
		case "lower", "casefold":
			r = strings.ToLower(s)
		case "upper":
			r = strings.ToUpper(s)
		case "strip":
			r = strings.TrimSpace(s)
		case "decode", "encode":
			if arg := argAt(pos, kw, 0, "encoding"); arg != nil {
				for _, e := range strsOf(a.eval(arg)) {
					if isRot13(e.s) {
						return []value{{kind: vStr, s: rot13(s), decoded: true}}
					}
				}
			}
			r = s
		case "replace":
			olds, news := strsOf(a.eval(argAt(pos, kw, 0, ""))), strsOf(a.eval(argAt(pos, kw, 1, "")))
			var out []value
			for _, o := range olds {
				for _, nw := range news {
					if res := strings.ReplaceAll(s, o.s, nw.s); len(res) <= MaxFoldedString {
						out = addVal(out, value{kind: vStr, s: res, decoded: v.decoded})
					}
				}
			}
			return out
		case "join":
			arg := argAt(pos, kw, 0, "")
			if arg == nil {
				return nil
			}
			parts, ok := a.stringSeq(arg)
			if !ok {
				return nil
			}
			r = strings.Join(parts, s)
			if len(r) > MaxFoldedString {
				return nil
			}
		default:
			return nil
		}
		return []value{{kind: vStr, s: r, decoded: v.decoded}}
	}
	return nil
}

// stringSeq folds a literal list/tuple of single-valued strings, or
// map(chr, [ints]), to its strings.
func (a *pyAnalyser) stringSeq(n *node) ([]string, bool) {
	switch n.kind {
	case "list", "tuple":
		var parts []string
		for _, c := range n.namedChildren() {
			vs := strsOf(a.eval(c))
			if len(vs) != 1 {
				return nil, false
			}
			parts = append(parts, vs[0].s)
		}
		return parts, true
	case "call":
		fn := n.child("function")
		pos, _ := callArgs(n, a.src)
		if fn != nil && len(pos) == 2 && fn.text(a.src) == "map" && pos[0].text(a.src) == "chr" && pos[1].kind == "list" {
			s, ok := a.intList(pos[1])
			if !ok {
				return nil, false
			}
			parts := make([]string, 0, len(s))
			for _, r := range s {
				parts = append(parts, string(r))
			}
			return parts, true
		}
	}
	return nil, false
}

// intList folds a literal list of small integers to the string of those
// code points.
func (a *pyAnalyser) intList(n *node) (string, bool) {
	var b strings.Builder
	for _, c := range n.namedChildren() {
		if c.kind != "integer" {
			return "", false
		}
		r, err := strconv.ParseInt(c.text(a.src), 0, 32)
		if err != nil || r < 0 || r > utf8.MaxRune {
			return "", false
		}
		b.WriteRune(rune(r))
		if b.Len() > MaxFoldedString {
			return "", false
		}
	}
	return b.String(), true
}

func (a *pyAnalyser) dictGet(d value, key string) []value {
	if d.s == "__main__" {
		return a.lookup(key)
	}
	return []value{nameVal(d.s + "." + key)}
}

func (a *pyAnalyser) evalSubscript(n *node) []value {
	base, sub := n.child("value"), n.child("subscript")
	if base == nil || sub == nil {
		return nil
	}
	vals := a.eval(base)
	var out []value
	if sub.kind == "slice" {
		for _, v := range vals {
			if v.kind == vStr {
				if s, ok := a.slice(v.s, sub); ok {
					out = addVal(out, value{kind: vStr, s: s, decoded: v.decoded})
				}
			} else if v.kind == vPayload {
				out = addVal(out, v)
			}
		}
		return out
	}
	keys := strsOf(a.eval(sub))
	for _, v := range vals {
		switch v.kind {
		case vDict:
			for _, k := range keys {
				out = union(out, a.dictGet(v, k.s))
			}
		case vName:
			switch v.s {
			case "builtins":
				for _, k := range keys {
					out = addVal(out, nameVal("builtins."+k.s))
				}
			case "sys.modules":
				for _, k := range keys {
					out = addVal(out, nameVal(k.s))
				}
			}
		case vPayload:
			out = addVal(out, v)
		case vStr:
			if sub.kind == "integer" {
				if i, err := strconv.Atoi(sub.text(a.src)); err == nil {
					rs := []rune(v.s)
					if i < 0 {
						i += len(rs)
					}
					if i >= 0 && i < len(rs) {
						out = addVal(out, value{kind: vStr, s: string(rs[i]), decoded: v.decoded})
					}
				}
			}
		}
	}
	return out
}

// slice applies a Python slice with constant (or absent) integer bounds.
func (a *pyAnalyser) slice(s string, sl *node) (string, bool) {
	// The slice's children: [start] ':' [stop] [':' [step]].
	var parts [3]*node
	idx := 0
	for _, c := range sl.children {
		if !c.named {
			if c.kind == ":" {
				idx++
				if idx > 2 {
					return "", false
				}
			}
			continue
		}
		parts[idx] = c
	}
	get := func(n *node) (int, bool, bool) { // value, present, ok
		if n == nil {
			return 0, false, true
		}
		t := n.text(a.src)
		v, err := strconv.Atoi(strings.ReplaceAll(t, " ", ""))
		if err != nil {
			return 0, false, false
		}
		return v, true, true
	}
	rs := []rune(s)
	ln := len(rs)
	step, hasStep, ok := get(parts[2])
	if !ok || hasStep && step == 0 {
		return "", false
	}
	if !hasStep {
		step = 1
	}
	start, hasStart, ok1 := get(parts[0])
	stop, hasStop, ok2 := get(parts[1])
	if !ok1 || !ok2 {
		return "", false
	}
	norm := func(i int, lo, hi int) int {
		if i < 0 {
			i += ln
		}
		return max(lo, min(hi, i))
	}
	var b strings.Builder
	if step > 0 {
		if !hasStart {
			start = 0
		}
		if !hasStop {
			stop = ln
		}
		start, stop = norm(start, 0, ln), norm(stop, 0, ln)
		for i := start; i < stop; i += step {
			b.WriteRune(rs[i])
		}
	} else {
		if !hasStart {
			start = ln - 1
		} else {
			start = norm(start, -1, ln-1)
		}
		if !hasStop {
			stop = -1
		} else {
			stop = norm(stop, -1, ln-1)
		}
		for i := start; i > stop; i += step {
			b.WriteRune(rs[i])
		}
	}
	return b.String(), true
}

// decode evaluates a decoder call: the decoded text when the input is a
// constant that decodes to UTF-8, else an opaque payload.
func (a *pyAnalyser) decode(fn string, pos []*node, kw map[string]*node) []value {
	var out []value
	ins := a.eval(argAt(pos, kw, 0, ""))
	var encodings []value
	if fn == "codecs.decode" {
		encodings = strsOf(a.eval(argAt(pos, kw, 1, "encoding")))
	}
	for _, in := range ins {
		if in.kind != vStr {
			out = addVal(out, value{kind: vPayload})
			continue
		}
		var res []byte
		var err error
		s := in.s
		switch fn {
		case "base64.b64decode", "base64.standard_b64decode", "base64.decodebytes", "base64.decodestring", "binascii.a2b_base64":
			res, err = decodeBase64(s, base64.StdEncoding)
		case "base64.urlsafe_b64decode":
			res, err = decodeBase64(s, base64.URLEncoding)
		case "base64.b32decode":
			res, err = base32.StdEncoding.DecodeString(stripSpace(s))
		case "base64.b16decode", "binascii.unhexlify", "binascii.a2b_hex", "bytes.fromhex", "bytearray.fromhex":
			res, err = hex.DecodeString(stripSpace(s))
		case "codecs.decode":
			err = errNotStatic
			for _, e := range encodings {
				switch {
				case isRot13(e.s):
					res, err = []byte(rot13(s)), nil
				case e.s == "base64":
					res, err = decodeBase64(s, base64.StdEncoding)
				case e.s == "hex":
					res, err = hex.DecodeString(stripSpace(s))
				}
			}
		default:
			err = errNotStatic
		}
		if err != nil || !utf8.Valid(res) || len(res) > MaxFoldedString {
			out = addVal(out, value{kind: vPayload})
			continue
		}
		out = addVal(out, value{kind: vStr, s: string(res), decoded: true})
	}
	if len(ins) == 0 {
		out = addVal(out, value{kind: vPayload})
	}
	return out
}

type staticErr string

func (e staticErr) Error() string { return string(e) }

const errNotStatic = staticErr("not decodable statically")

func decodeBase64(s string, enc *base64.Encoding) ([]byte, error) {
	s = stripSpace(s)
	if res, err := enc.DecodeString(s); err == nil {
		return res, nil
	}
	return enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(s, "="))
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
}

func isRot13(e string) bool {
	e = strings.ToLower(e)
	return e == "rot13" || e == "rot_13" || e == "rot-13"
}

func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

// pyString folds a string literal (prefixes, escapes, f-string
// interpolations of constants); false when it is not constant.
func (a *pyAnalyser) pyString(n *node) (string, bool) {
	var b strings.Builder
	raw, fstr := false, false
	for _, c := range n.children {
		switch c.kind {
		case "string_start":
			p := strings.ToLower(strings.TrimRight(c.text(a.src), "'\""))
			raw, fstr = strings.Contains(p, "r"), strings.Contains(p, "f") || strings.Contains(p, "t")
		case "string_content":
			t := c.text(a.src)
			if fstr {
				t = strings.ReplaceAll(strings.ReplaceAll(t, "{{", "{"), "}}", "}")
			}
			if !raw {
				var ok bool
				if t, ok = unescapePy(t); !ok {
					return "", false
				}
			}
			b.WriteString(t)
		case "interpolation":
			vs := strsOf(a.eval(c.child("expression")))
			if len(vs) != 1 || c.child("format_specifier") != nil {
				return "", false
			}
			b.WriteString(vs[0].s)
		}
		if b.Len() > MaxFoldedString {
			return "", false
		}
	}
	return b.String(), true
}

// unescapePy decodes Python escape sequences; false for \N{…}.
func unescapePy(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			w := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+w > len(s) {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:i+1+w], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", false
			}
			b.WriteRune(rune(v))
			i += w
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(v))
			i = j - 1
		case 'N':
			return "", false
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), true
}
