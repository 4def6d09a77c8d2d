package code

import (
	"sort"
	"strings"
)

// The findings pass of the Python analyser (see python.go).

// referenceContexts are the parents in which an expression's value
// escapes to be called elsewhere (map(os.system, cmds), [eval],
// return os.system, f(callback=eval)); a dangerous callable seen there is
// reported as an indirect call.
var referenceContexts = map[string]bool{
	"argument_list": true, "list": true, "tuple": true, "set": true, "return_statement": true,
	"lambda": true, "yield": true, "conditional_expression": true, "boolean_operator": true,
	"pair": true, "keyword_argument": true, "list_splat": true, "expression_list": true,
}

func (a *pyAnalyser) check(n *node) {
	if !a.step() {
		return
	}
	switch n.kind {
	case "call":
		a.checkCall(n)
	case "attribute":
		if at := n.child("attribute"); at != nil && pyIntrospection[at.text(a.src)] {
			a.rep.add(pyObfIntro, n, "access to "+at.text(a.src)+", used to reach code objects, globals or other classes from a sandbox")
		}
	case "subscript":
		a.checkSubscriptLookup(n)
	case "assignment", "augmented_assignment":
		if l := n.child("left"); l != nil {
			a.checkMutation(n, l)
		}
	case "delete_statement":
		for _, c := range n.namedChildren() {
			a.checkMutation(n, c)
		}
	case "import_statement", "import_from_statement":
		a.checkImport(n)
	case "except_clause":
		if a.quality && bareExcept(n) {
			a.rep.add(pyQualExcept, n, "bare except: catches every exception, KeyboardInterrupt and SystemExit included")
		}
	case "while_statement":
		if c := n.child("condition"); a.quality && c != nil && (c.text(a.src) == "True" || c.text(a.src) == "1") && !hasBreak(n.child("body")) {
			a.rep.add(pyQualLoop, n, "while "+c.text(a.src)+" without break never ends by itself")
		}
	case "default_parameter", "typed_default_parameter":
		if v := n.child("value"); a.quality && v != nil && (v.kind == "list" || v.kind == "dictionary" || v.kind == "set") {
			a.rep.add(pyQualMut, n, "mutable default argument is shared between calls")
		}
	}
	if n.kind == "identifier" || n.kind == "attribute" {
		a.checkEnviron(n)
	}
	if p := n.parent; p != nil && referenceContexts[p.kind] && n.field != "name" && n.field != "parameters" &&
		(n.kind == "identifier" || n.kind == "attribute" || n.kind == "subscript" || n.kind == "call") {
		a.checkReference(n)
	}
	for _, c := range n.children {
		a.check(c)
	}
}

// names returns the distinct canonical names among vals, sorted.
func names(vals []value) []string {
	var out []string
	for _, v := range vals {
		if v.kind == vName && !containsStr(out, v.s) {
			out = append(out, v.s)
		}
	}
	sort.Strings(out)
	return out
}

// shortName is the last component of a canonical name ("builtins.eval" →
// "eval").
func shortName(name string) string {
	if strings.HasPrefix(name, "builtins.") {
		return strings.TrimPrefix(name, "builtins.")
	}
	return name
}

// writtenAs notes how a call was written when it differs from its
// canonical name (an alias or an obfuscation).
func writtenAs(canonical, written string) string {
	written = strings.Join(strings.Fields(written), "")
	if written == canonical || written == shortName(canonical) {
		return ""
	}
	return " (written " + truncate(firstLine(written), 60) + ")"
}

// dangerous reports whether calling name is a blocking rule's business.
func dangerous(name string) (string, bool) {
	r := pyRuleFor(name)
	if r == "" {
		return "", false
	}
	return r, blocking(rules[r].Severity)
}

func (a *pyAnalyser) checkCall(n *node) {
	fn := n.child("function")
	if fn == nil {
		return
	}
	pos, kw := callArgs(n, a.src)
	written := fn.text(a.src)
	for _, c := range names(a.eval(fn)) {
		how := writtenAs(c, written)
		switch c {
		case "builtins.eval", "builtins.exec", "builtins.execfile":
			a.checkExec(n, shortName(c), how, argAt(pos, kw, 0, "source"))
		case "builtins.compile":
			a.rep.add(pyCompile, n, "compile() builds a code object at run time"+how)
		case "builtins.__import__", "importlib.import_module":
			mods := strsOf(a.eval(argAt(pos, kw, 0, "name")))
			if len(mods) == 0 {
				a.rep.add(pyCompile, n, shortName(c)+"() imports a module named at run time"+how)
			}
			for _, m := range mods {
				a.rep.add(pyCompile, n, shortName(c)+"() imports "+m.s+" at run time"+how)
			}
		case "builtins.getattr":
			a.checkLookup(n, a.eval(argAt(pos, kw, 0, "")), argAt(pos, kw, 1, ""), "getattr")
		case "builtins.setattr", "builtins.delattr":
			for _, o := range a.eval(argAt(pos, kw, 0, "")) {
				if isNamespace(o) {
					a.rep.add(pyObfMutate, n, shortName(c)+"() on "+o.s+" replaces a builtin or module attribute")
					break
				}
			}
		case "builtins.open":
			a.checkOpen(n, pos, kw, how)
		default:
			a.checkNamedCall(n, fn, c, how, pos, kw)
		}
	}
	// Lookups through a namespace dict's methods: globals().get('eval').
	if fn.kind == "attribute" {
		if m := fn.child("attribute"); m != nil && (m.text(a.src) == "get" || m.text(a.src) == "__getitem__" || m.text(a.src) == "pop") {
			var dicts []value
			for _, v := range a.eval(fn.child("object")) {
				if v.kind == vDict {
					dicts = append(dicts, v)
				}
			}
			if len(dicts) > 0 {
				a.checkLookup(n, dicts, argAt(pos, kw, 0, ""), "dict lookup")
			}
		}
	}
}

func (a *pyAnalyser) checkNamedCall(n, fn *node, c, how string, pos []*node, kw map[string]*node) {
	r := pyRuleFor(c)
	if r == "" {
		return
	}
	sev := rules[r].Severity
	msg := "call to " + c + how
	switch r {
	case pyFileDelete, pyFileWrite, pyFilePerm:
		for _, p := range a.pathConsts(fn, pos, kw) {
			if r == pyFileDelete && rootLike(p) {
				sev = SevCritical
				msg += " on " + p + ", a system root"
			} else if why := sensitivePath(p, true); why != "" {
				a.rep.add(pyFileSens, n, c+" on "+p+": "+why)
			}
		}
	case pyProc:
		if shell, ok := kw["shell"]; ok && shell.text(a.src) == "True" {
			msg += " with shell=True"
		}
		// A constant command line is analysed as shell: os.system('rm -rf /')
		// also reports SH-RM-001.
		for _, cmd := range strsOf(a.eval(argAt(pos, kw, 0, "args"))) {
			a.nestedShell(cmd.s, n, shortName(c))
		}
	case pyDeser:
		if c == "yaml.load" || c == "yaml.load_all" {
			if l, ok := kw["Loader"]; ok && strings.Contains(l.text(a.src), "Safe") {
				return
			}
		}
	}
	a.rep.addSev(r, sev, n, msg)
}

// pathConsts returns the constant paths a file call names: its first
// argument, and for a method of Path('x') the constructor's argument.
func (a *pyAnalyser) pathConsts(fn *node, pos []*node, kw map[string]*node) []string {
	var out []string
	for _, v := range strsOf(a.eval(argAt(pos, kw, 0, "path"))) {
		out = append(out, v.s)
	}
	if fn.kind == "attribute" {
		if obj := fn.child("object"); obj != nil && obj.kind == "call" {
			p2, kw2 := callArgs(obj, a.src)
			for _, v := range strsOf(a.eval(argAt(p2, kw2, 0, ""))) {
				out = append(out, v.s)
			}
		}
	}
	return out
}

func (a *pyAnalyser) checkOpen(n *node, pos []*node, kw map[string]*node, how string) {
	writing := false
	if mode := argAt(pos, kw, 1, "mode"); mode != nil {
		modes := strsOf(a.eval(mode))
		if len(modes) == 0 {
			writing = true
			a.rep.add(pyFileWrite, n, "open() with a mode not known statically"+how)
		}
		for _, m := range modes {
			if strings.ContainsAny(m.s, "wax+") {
				writing = true
				a.rep.add(pyFileWrite, n, "open() for writing (mode '"+m.s+"')"+how)
				break
			}
		}
	}
	for _, p := range strsOf(a.eval(argAt(pos, kw, 0, "file"))) {
		if why := sensitivePath(p.s, writing); why != "" {
			a.rep.add(pyFileSens, n, "open() of "+p.s+": "+why)
		}
	}
}

// checkExec handles eval/exec: code not known statically is critical, a
// decoded payload is critical, a constant string is analysed itself.
func (a *pyAnalyser) checkExec(n *node, fname, how string, arg *node) {
	if arg == nil {
		a.rep.add(pyExec, n, fname+"() of code not known statically"+how)
		return
	}
	vals := a.eval(arg)
	unknown := len(vals) == 0
	for _, v := range vals {
		switch {
		case v.kind == vPayload:
			a.rep.add(pyObfPayload, n, fname+"() of decoded data"+how)
		case v.kind == vStr:
			blocked := a.nested(v.s, n, fname)
			if v.decoded {
				a.rep.add(pyObfPayload, n, fname+"() of a statically decoded payload"+how)
			} else if !blocked {
				a.rep.add(pyExecConst, n, fname+"() of a constant string; its code was analysed"+how)
			}
		default:
			unknown = true
		}
	}
	if unknown {
		a.rep.add(pyExec, n, fname+"() of code not known statically"+how)
	}
}

// nested parses and analyses code handed to eval/exec; its findings are
// reported at the outer call. It reports whether anything blocking was
// found (an unparsable or too deep payload counts as blocking).
func (a *pyAnalyser) nested(code string, at *node, fname string) bool {
	if a.depth >= MaxPayloadDepth {
		a.rep.add(pyLimit, at, fname+"() of code nested deeper than "+itoa(MaxPayloadDepth)+" levels")
		return true
	}
	p, err := parse(grammarFor(langPython), code)
	if err != nil {
		if _, ok := err.(*syntaxError); ok {
			a.rep.add(pyExec, at, fname+"() of a string that does not parse as Python")
		} else {
			a.rep.add(pyLimit, at, fname+"() of code too large to analyse: "+err.Error())
		}
		return true
	}
	savedAt, savedPrefix := a.rep.at, a.rep.prefix
	if a.rep.at == nil {
		a.rep.at = at
	}
	a.rep.prefix += "in code passed to " + fname + "(): "
	before := a.rep.blocking
	if _, err := analysePython(p, a.rep, a.quality, a.depth+1, a.budget); err != nil {
		a.exceeded = true
	}
	found := a.rep.blocking > before
	a.rep.at, a.rep.prefix = savedAt, savedPrefix
	return found
}

// nestedShell analyses a constant command line handed to a shell; its
// findings are reported at the call.
func (a *pyAnalyser) nestedShell(cmd string, at *node, fname string) {
	p, err := parse(grammarFor(langBash), cmd)
	if err != nil {
		return // the call itself is already reported
	}
	savedAt, savedPrefix := a.rep.at, a.rep.prefix
	if a.rep.at == nil {
		a.rep.at = at
	}
	a.rep.prefix += "in the command run by " + fname + "(): "
	if analyseShell(p, a.rep, false, a.budget) != nil {
		a.exceeded = true
	}
	a.rep.at, a.rep.prefix = savedAt, savedPrefix
}

// isNamespace reports whether v is builtins, a namespace dict or
// sys.modules: the places a dangerous name is looked up dynamically.
func isNamespace(v value) bool {
	return v.kind == vDict || v.kind == vName && (v.s == "builtins" || v.s == "sys.modules")
}

// isRiskyModule reports whether v names a module whose attributes include
// dangerous callables (looking one up by a computed name is obfuscation).
func isRiskyModule(v value) bool {
	if v.kind != vName || strings.Contains(v.s, "(") {
		return false
	}
	first, _, _ := strings.Cut(v.s, ".")
	return first == v.s && pyRiskyModules[first]
}

// checkLookup reports getattr(obj, name), ns[name] and ns.get(name) that
// resolve to a dangerous name or use a computed name on a namespace.
func (a *pyAnalyser) checkLookup(n *node, objs []value, key *node, how string) {
	keys := strsOf(a.eval(key))
	for _, o := range objs {
		if !isNamespace(o) && !isRiskyModule(o) {
			continue
		}
		where := o.s
		if o.kind == vDict {
			where = "the namespace of " + o.s
		}
		if len(keys) == 0 {
			a.rep.add(pyObfLookup, n, how+" of a computed name on "+where)
			return
		}
		for _, k := range keys {
			if pyIntrospection[k.s] {
				a.rep.add(pyObfIntro, n, how+" of "+k.s)
			}
			var res []value
			if o.kind == vDict {
				res = a.dictGet(o, k.s)
			} else if r, ok := attrOf(o, k.s); ok {
				res = []value{r}
			}
			for _, name := range names(res) {
				if _, bad := dangerous(name); bad || name == "builtins.eval" || name == "builtins.exec" || name == "builtins.compile" || name == "builtins.__import__" {
					a.rep.add(pyObfLookup, n, how+" resolves to "+name)
				}
			}
		}
	}
}

func (a *pyAnalyser) checkSubscriptLookup(n *node) {
	base, sub := n.child("value"), n.child("subscript")
	if base == nil || sub == nil || sub.kind == "slice" {
		return
	}
	if n.field == "left" && n.parent != nil && (n.parent.kind == "assignment" || n.parent.kind == "augmented_assignment") {
		return // a store, see checkMutation
	}
	var ns []value
	for _, v := range a.eval(base) {
		if isNamespace(v) {
			ns = append(ns, v)
		}
	}
	if len(ns) > 0 {
		a.checkLookup(n, ns, sub, "subscript")
	}
}

// checkMutation reports stores into builtins and sys.modules.
func (a *pyAnalyser) checkMutation(stmt, target *node) {
	var base *node
	switch target.kind {
	case "attribute":
		base = target.child("object")
	case "subscript":
		base = target.child("value")
	default:
		return
	}
	for _, v := range a.eval(base) {
		if isNamespace(v) && !(v.kind == vDict && v.s == "__main__") {
			a.rep.add(pyObfMutate, stmt, "store into "+v.s+" replaces a builtin or a module")
			return
		}
	}
}

func (a *pyAnalyser) checkImport(n *node) {
	if n.kind == "import_from_statement" {
		mod := n.child("module_name")
		if mod == nil || mod.kind != "dotted_name" {
			return
		}
		m := canonPy(mod.text(a.src))
		first, _, _ := strings.Cut(m, ".")
		for _, c := range n.children {
			if c.kind == "wildcard_import" {
				switch {
				case pyImportRuns(m):
					a.rep.add(pyImportRun, n, "from "+m+" import * binds what runs processes or code")
				case pyRiskyModules[first]:
					a.rep.add(pyImportStar, n, "from "+m+" import * hides which of its names are used")
				}
				return
			}
		}
		if pyImportRuns(m) {
			a.rep.add(pyImportRun, n, "import from "+m+", which runs processes or code")
			return
		}
		for _, c := range n.children {
			name := c
			if c.kind == "aliased_import" {
				name = c.child("name")
			}
			if c == mod || name == nil || name.kind != "dotted_name" {
				continue
			}
			if full := canonPy(m + "." + name.text(a.src)); pyImportRuns(full) {
				a.rep.add(pyImportRun, n, "import of "+full+", which runs processes or code")
				return
			}
		}
		if pyRiskyModules[first] {
			a.rep.add(pyImport, n, "import from "+m)
		}
		return
	}
	for _, c := range n.children {
		name := c
		if c.kind == "aliased_import" {
			name = c.child("name")
		}
		if name == nil || name.kind != "dotted_name" {
			continue
		}
		m := canonPy(name.text(a.src))
		first, _, _ := strings.Cut(m, ".")
		switch {
		case pyImportRuns(m):
			a.rep.add(pyImportRun, n, "import of "+m+", which runs processes or code")
		case pyRiskyModules[first]:
			a.rep.add(pyImport, n, "import of "+m)
		}
	}
}

// checkReference reports a dangerous callable used as a value.
func (a *pyAnalyser) checkReference(n *node) {
	if n.parent.kind == "argument_list" && n.parent.parent != nil {
		// The object of getattr/setattr/vars/… is not called.
		if fn := n.parent.parent.child("function"); fn != nil {
			for _, c := range names(a.eval(fn)) {
				switch c {
				case "builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.vars", "builtins.hasattr", "builtins.callable", "builtins.id":
					return
				}
			}
		}
	}
	for _, name := range names(a.eval(n)) {
		r, bad := dangerous(name)
		switch name {
		case "builtins.eval", "builtins.exec", "builtins.execfile":
			r, bad = pyExec, true
		case "builtins.compile", "builtins.__import__":
			r, bad = pyCompile, true
		}
		if bad {
			a.rep.add(r, n, name+" used as a value (called indirectly)"+writtenAs(name, n.text(a.src)))
		}
	}
}

func (a *pyAnalyser) checkEnviron(n *node) {
	if p := n.parent; p != nil && p.kind == "attribute" && n.field == "object" {
		return // os.environ.get(…) is judged as a call
	}
	for _, name := range names(a.eval(n)) {
		if name == "os.environ" || name == "os.environb" {
			a.rep.add(pyEnv, n, "access to "+name)
		}
	}
}

func bareExcept(n *node) bool {
	for _, c := range n.children {
		if c.named && c.kind != "block" && c.kind != "comment" {
			return false
		}
	}
	return true
}

// hasBreak reports whether a loop body has a break that leaves this loop
// (not a nested loop's, not a nested function's), or a return or raise.
func hasBreak(n *node) bool {
	if n == nil {
		return false
	}
	for _, c := range n.children {
		switch c.kind {
		case "break_statement", "return_statement", "raise_statement":
			return true
		case "while_statement", "for_statement", "function_definition", "class_definition", "lambda":
			continue
		}
		if hasBreak(c) {
			return true
		}
	}
	return false
}

// rootLike reports whether deleting p deletes a system root or a home.
func rootLike(p string) bool {
	p = strings.TrimSpace(p)
	switch strings.TrimRight(p, "/*") {
	case "", "~", "$HOME", "/home", "/etc", "/usr", "/var", "/bin", "/sbin", "/boot", "/root", "/lib", "/opt", "/srv", "C:", "C:\\", "c:":
		return true
	}
	return p == "/" || p == "/*"
}

// sensitivePath explains why touching p is sensitive ("" when it is not):
// credentials and secrets when reading, system locations when writing.
func sensitivePath(p string, write bool) string {
	lp := strings.ToLower(p)
	for _, s := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/.ssh/", "id_rsa", "id_ed25519", "id_ecdsa",
		".aws/credentials", "/proc/self/environ", ".netrc", ".pgpass", ".docker/config.json", ".kube/config",
		"docker.sock", ".git-credentials", ".npmrc", ".pypirc"} {
		if strings.Contains(lp, s) {
			return "credentials or secrets"
		}
	}
	if lp == ".env" || strings.HasSuffix(lp, "/.env") {
		return "credentials or secrets"
	}
	if !write {
		if lp == "/etc/passwd" {
			return "the system's account list"
		}
		return ""
	}
	for _, s := range []string{"/etc/", "/bin/", "/sbin/", "/usr/", "/boot/", "/lib/", "/lib64/", "/dev/", "/sys/", "/proc/", "/var/spool/cron"} {
		if strings.HasPrefix(lp, s) {
			return "a system location"
		}
	}
	for _, s := range []string{".bashrc", ".bash_profile", ".profile", ".zshrc", "authorized_keys", "crontab"} {
		if strings.HasSuffix(lp, s) {
			return "a startup or access file"
		}
	}
	return ""
}
