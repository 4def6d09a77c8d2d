package code

import "strings"

// The shell analyser: each command's words are folded (quotes, escapes,
// variables assigned a constant), wrappers are stripped (sudo, env,
// nohup, xargs, timeout …) and the command is judged by its name and
// arguments; pipelines, redirections, command and process substitutions
// and function definitions add the patterns that span commands (curl|sh,
// bash <(curl …), > /dev/sda, /dev/tcp reverse shells, fork bombs).

var (
	shRm      = rule("SH-RM-001", SevHigh, "destructive", "rm -r/-f (critical on a system root or with --no-preserve-root; medium without flags)")
	shDisk    = rule("SH-DISK-001", SevCritical, "destructive", "disk destruction (dd of=/dev/…, mkfs, fdisk, wipefs, shred, > /dev/sda)")
	shPerm    = rule("SH-PERM-001", SevHigh, "permission", "chmod 777 / o+w / setuid, chown -R of a system root")
	shEval    = rule("SH-EVAL-001", SevHigh, "execution", "eval, sh -c or source of code not known statically")
	shNetExec = rule("SH-NET-001", SevCritical, "network", "downloaded code executed (curl|sh, bash <(curl …), sh -c \"$(wget …)\")")
	shRevsh   = rule("SH-NET-002", SevCritical, "network", "reverse shell (nc -e, /dev/tcp redirection, socat exec)")
	shNet     = rule("SH-NET-003", SevMedium, "network", "network tool (curl, wget, nc, ssh, scp …)")
	shDecode  = rule("SH-OBF-001", SevCritical, "obfuscation", "decoded payload piped to a shell (base64 -d | sh)")
	shSys     = rule("SH-SYS-001", SevHigh, "system", "write to a system location (/etc, /boot, /usr …)")
	shSysCtl  = rule("SH-SYS-002", SevHigh, "system", "system control (shutdown, reboot, kill -9 -1, iptables -F)")
	shPersist = rule("SH-SYS-003", SevMedium, "system", "persistence or privilege (crontab, sudo, systemctl enable)")
	shDos     = rule("SH-DOS-001", SevCritical, "destructive", "fork bomb (a function that pipes or backgrounds itself)")
	shSubst   = rule("SH-SUBST-001", SevLow, "execution", "command substitution ($(…) or backticks) runs a command inside a word")
	shDynCmd  = rule("SH-EVAL-002", SevMedium, "execution", "command name not known statically (from a variable or substitution)")
	shFile    = rule("SH-FILE-001", SevLow, "file", "output redirected to a file")
	shQual    = rule("SH-QUAL-001", SevInfo, "quality", "while true loop without break")
)

var shInterpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "ash": true,
	"python": true, "python2": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true,
}

var shNetTools = map[string]bool{
	"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "socat": true, "telnet": true,
	"ssh": true, "scp": true, "sftp": true, "ftp": true, "rsync": true, "fetch": true,
}

var shWrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "nice": true, "ionice": true, "timeout": true,
	"command": true, "exec": true, "builtin": true, "xargs": true, "busybox": true, "stdbuf": true, "time": true,
	"strace": true, "setsid": true, "chroot": true,
}

type shAnalyser struct {
	src     string
	rep     *reporter
	quality bool
	budget  *int
	over    bool
	env     map[string]string
}

func analyseShell(p *parsed, rep *reporter, quality bool, budget *int) error {
	a := &shAnalyser{src: p.src, rep: rep, quality: quality, budget: budget, env: map[string]string{}}
	a.bindVars(p.root)
	a.walk(p.root)
	if a.over {
		return &limitError{limit: "steps", max: MaxSteps, found: MaxSteps + 1}
	}
	return nil
}

func (a *shAnalyser) step() bool {
	if a.over {
		return false
	}
	*a.budget++
	a.over = *a.budget > MaxSteps
	return !a.over
}

// bindVars records variables assigned one constant word (x=rm). A
// variable assigned twice keeps no value (it is dynamic).
func (a *shAnalyser) bindVars(n *node) {
	if !a.step() {
		return
	}
	if n.kind == "variable_assignment" {
		if nm, v := n.child("name"), n.child("value"); nm != nil {
			val, ok := "", true
			if v != nil {
				val, ok = a.word(v)
			}
			name := nm.text(a.src)
			if old, had := a.env[name]; had && old != val || !ok {
				a.env[name] = "\x00dynamic"
			} else {
				a.env[name] = val
			}
		}
	}
	for _, c := range n.children {
		a.bindVars(c)
	}
}

// word folds a word to its text; false when it depends on something not
// known statically.
func (a *shAnalyser) word(n *node) (string, bool) {
	switch n.kind {
	case "word", "number":
		t := n.text(a.src)
		if !strings.Contains(t, `\`) {
			return t, true
		}
		var b strings.Builder
		for i := 0; i < len(t); i++ {
			if t[i] == '\\' && i+1 < len(t) {
				i++
			}
			b.WriteByte(t[i])
		}
		return b.String(), true
	case "raw_string":
		return strings.TrimSuffix(strings.TrimPrefix(n.text(a.src), "'"), "'"), true
	case "ansi_c_string":
		s, ok := unescapePy(strings.TrimSuffix(strings.TrimPrefix(n.text(a.src), "$'"), "'"))
		return s, ok
	case "string":
		var b strings.Builder
		for _, c := range n.children {
			switch c.kind {
			case "string_content":
				b.WriteString(c.text(a.src))
			case "simple_expansion", "expansion":
				s, ok := a.word(c)
				if !ok {
					return "", false
				}
				b.WriteString(s)
			default:
				if c.named {
					return "", false
				}
			}
		}
		return b.String(), true
	case "concatenation":
		var b strings.Builder
		for _, c := range n.children {
			s, ok := a.word(c)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	case "simple_expansion", "expansion":
		name := strings.Trim(strings.TrimPrefix(n.text(a.src), "$"), "{}")
		if v, ok := a.env[name]; ok && v != "\x00dynamic" {
			return v, true
		}
		if name == "HOME" {
			return "~", true
		}
	case "command_name":
		for _, c := range n.children {
			return a.word(c)
		}
	}
	return "", false
}

// shCmd is a command with its wrappers stripped.
type shCmd struct {
	node    *node
	name    string // base name; "" when not known statically
	args    []string
	argN    []*node
	dynamic []bool
	sudo    bool
}

func (a *shAnalyser) command(n *node) shCmd {
	c := shCmd{node: n}
	var words []*node
	if nm := n.child("name"); nm != nil {
		words = append(words, nm)
	}
	for _, ch := range n.children {
		if ch.field == "argument" {
			words = append(words, ch)
		}
	}
	var texts []string
	var dyn []bool
	for _, w := range words {
		s, ok := a.word(w)
		texts = append(texts, s)
		dyn = append(dyn, !ok)
	}
	// Strip wrappers: sudo -u x env A=1 nohup rm …
	i := 0
	for i < len(texts) && !dyn[i] && shWrappers[baseName(texts[i])] {
		w := baseName(texts[i])
		if w == "sudo" || w == "doas" {
			c.sudo = true
		}
		i++
		for i < len(texts) && !dyn[i] && (strings.HasPrefix(texts[i], "-") || strings.Contains(texts[i], "=") ||
			w == "timeout" && isNumberish(texts[i]) || w == "sudo" && i > 0 && texts[i-1] == "-u") {
			i++
		}
	}
	if i < len(texts) {
		if !dyn[i] {
			c.name = baseName(texts[i])
		}
		c.args, c.dynamic, c.argN = texts[i+1:], dyn[i+1:], words[i+1:]
	}
	return c
}

func isNumberish(s string) bool {
	return strings.TrimRight(s, "0123456789.smhd") == ""
}

func (c shCmd) has(flag string) bool {
	for i, a := range c.args {
		if c.dynamic[i] {
			continue
		}
		if a == flag {
			return true
		}
		if len(flag) == 2 && flag[0] == '-' && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], rune(flag[1])) {
			return true
		}
	}
	return false
}

func (c shCmd) operands() []string {
	var out []string
	for i, a := range c.args {
		if !c.dynamic[i] && !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

func (a *shAnalyser) walk(n *node) {
	if !a.step() {
		return
	}
	switch n.kind {
	case "command":
		a.checkCommand(n)
	case "pipeline":
		a.checkPipeline(n)
	case "file_redirect":
		a.checkRedirect(n)
	case "command_substitution":
		a.rep.add(shSubst, n, "command substitution runs: "+snippet(n.text(a.src)))
	case "function_definition":
		a.checkForkBomb(n)
	case "while_statement":
		if a.quality {
			if c := n.child("condition"); c != nil && (strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c.text(a.src)), ";")) == "true" || strings.TrimSpace(c.text(a.src)) == ":") && !strings.Contains(n.text(a.src), "break") {
				a.rep.add(shQual, n, "while true without break never ends by itself")
			}
		}
	}
	for _, c := range n.children {
		a.walk(c)
	}
}

func (a *shAnalyser) checkCommand(n *node) {
	c := a.command(n)
	if c.sudo {
		a.rep.add(shPersist, n, "runs with elevated privileges (sudo)")
	}
	if c.name == "" {
		if nm := n.child("name"); nm != nil {
			a.rep.add(shDynCmd, n, "command name not known statically: "+snippet(nm.text(a.src)))
		}
		return
	}
	ops := c.operands()
	switch name := c.name; {
	case name == "rm":
		recursive := c.has("-r") || c.has("-R") || c.has("--recursive")
		force := c.has("-f") || c.has("--force")
		root := c.has("--no-preserve-root")
		for _, o := range ops {
			root = root || rootLike(o)
		}
		for i, d := range c.dynamic {
			if d && c.argN[i] != nil && (recursive || force) {
				a.rep.add(shRm, n, "rm -r/-f of a path not known statically")
			}
		}
		switch {
		case root && (recursive || force):
			a.rep.addSev(shRm, SevCritical, n, "rm of a system root: "+strings.Join(ops, " "))
		case recursive || force:
			a.rep.add(shRm, n, "recursive or forced rm: "+strings.Join(ops, " "))
		default:
			a.rep.addSev(shRm, SevMedium, n, "rm deletes files: "+strings.Join(ops, " "))
		}
	case name == "dd":
		for _, arg := range c.args {
			if strings.HasPrefix(arg, "of=/dev/") && !strings.HasPrefix(arg, "of=/dev/null") {
				a.rep.add(shDisk, n, "dd writes to a device: "+arg)
			}
		}
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "fdisk" || name == "sfdisk" || name == "parted" ||
		name == "wipefs" || name == "shred" || name == "mkswap":
		a.rep.add(shDisk, n, name+" destroys a filesystem or disk")
	case name == "chmod":
		for _, o := range ops {
			if o == "777" || o == "0777" || o == "666" || o == "0666" || strings.Contains(o, "o+w") || strings.Contains(o, "a+w") ||
				strings.Contains(o, "+s") || o == "4755" || o == "u+s" {
				sev := SevHigh
				for _, t := range ops {
					if rootLike(t) {
						sev = SevCritical
					}
				}
				a.rep.addSev(shPerm, sev, n, "chmod "+o+" opens permissions")
				break
			}
		}
	case name == "chown":
		if c.has("-R") {
			for _, o := range ops {
				if rootLike(o) {
					a.rep.add(shPerm, n, "chown -R of a system root: "+o)
				}
			}
		}
	case name == "eval":
		a.rep.add(shEval, n, "eval runs code built at run time")
		a.checkFetchInArgs(n, c)
	case name == "source" || name == ".":
		for i, arg := range c.args {
			if c.dynamic[i] || arg == "/dev/stdin" || arg == "-" {
				a.rep.add(shEval, n, name+" of code not known statically")
				break
			}
		}
		a.checkFetchInArgs(n, c)
	case shInterpreters[name]:
		if c.has("-c") || c.has("-e") {
			for i := range c.args {
				if c.dynamic[i] {
					a.rep.add(shEval, n, name+" -c of code not known statically")
					break
				}
			}
		}
		a.checkFetchInArgs(n, c)
	case name == "nc" || name == "ncat" || name == "netcat":
		if c.has("-e") || c.has("-c") {
			a.rep.add(shRevsh, n, name+" -e hands a shell to the network")
		} else {
			a.rep.add(shNet, n, name+" opens a network connection")
		}
	case name == "socat":
		if strings.Contains(strings.Join(c.args, " "), "exec:") || strings.Contains(strings.Join(c.args, " "), "EXEC:") {
			a.rep.add(shRevsh, n, "socat exec: hands a program to the network")
		} else {
			a.rep.add(shNet, n, "socat opens a network connection")
		}
	case shNetTools[name]:
		a.rep.add(shNet, n, name+" reaches the network")
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		a.rep.add(shSysCtl, n, name+" stops the machine")
	case name == "init" && len(ops) > 0 && (ops[0] == "0" || ops[0] == "6"):
		a.rep.add(shSysCtl, n, "init "+ops[0]+" stops the machine")
	case name == "kill" || name == "pkill" || name == "killall":
		for _, o := range c.args {
			if o == "-1" || o == "1" && name == "kill" {
				a.rep.add(shSysCtl, n, name+" of every process or init")
				break
			}
		}
	case name == "iptables" || name == "ip6tables" || name == "ufw":
		if c.has("-F") || c.has("--flush") || containsStr(ops, "disable") {
			a.rep.add(shSysCtl, n, name+" drops the firewall rules")
		}
	case name == "crontab" || name == "systemctl" && containsStr(ops, "enable"):
		a.rep.add(shPersist, n, name+" installs something that runs later")
	case name == "tee" || name == "cp" || name == "mv" || name == "install" || name == "ln" || name == "sed" && c.has("-i"):
		for _, o := range ops {
			if sensitivePath(o, true) != "" && !(name == "cp" && o == ops[0] && len(ops) > 1) {
				a.rep.add(shSys, n, name+" writes "+o)
				break
			}
		}
	}
}

// checkFetchInArgs reports code fetched from the network and run: sh -c
// "$(curl …)", bash <(wget …), eval "$(curl …)".
func (a *shAnalyser) checkFetchInArgs(n *node, c shCmd) {
	for _, arg := range c.argN {
		if fetches(arg, a) {
			a.rep.add(shNetExec, n, c.name+" runs code downloaded from the network")
			return
		}
	}
}

// fetches reports whether a word runs a download inside it ($(curl …),
// <(wget …)).
func fetches(n *node, a *shAnalyser) bool {
	if n.kind == "command" {
		c := a.command(n)
		return c.name == "curl" || c.name == "wget" || c.name == "fetch"
	}
	for _, ch := range n.children {
		if fetches(ch, a) {
			return true
		}
	}
	return false
}

func (a *shAnalyser) checkPipeline(n *node) {
	var stages []shCmd
	for _, ch := range n.children {
		cmd := ch
		if cmd.kind == "redirected_statement" {
			cmd = cmd.child("body")
		}
		if cmd != nil && cmd.kind == "command" {
			stages = append(stages, a.command(cmd))
		}
	}
	fetched, decoded := false, false
	for _, s := range stages {
		switch {
		case s.name == "curl" || s.name == "wget" || s.name == "fetch":
			fetched = true
		case s.name == "base64" && (s.has("-d") || s.has("--decode")) || s.name == "xxd" && s.has("-r") || s.name == "openssl" && s.has("-d"):
			decoded = true
		case shInterpreters[s.name] && !s.has("-c"):
			if fetched {
				a.rep.add(shNetExec, n, "download piped to "+s.name)
			}
			if decoded {
				a.rep.add(shDecode, n, "decoded data piped to "+s.name)
			}
		}
	}
}

func (a *shAnalyser) checkRedirect(n *node) {
	d := n.child("destination")
	if d == nil {
		return
	}
	op := ""
	for _, c := range n.children {
		if !c.named {
			op = c.text(a.src)
		}
	}
	if op == "<" || op == "<&" {
		return
	}
	dest, ok := a.word(d)
	if !ok {
		return
	}
	switch {
	case strings.HasPrefix(dest, "/dev/tcp/") || strings.HasPrefix(dest, "/dev/udp/"):
		a.rep.add(shRevsh, n, "redirection to "+dest+" connects a shell to the network")
	case dest == "/dev/null" || dest == "/dev/stdout" || dest == "/dev/stderr" || isNumberish(dest):
	case strings.HasPrefix(dest, "/dev/sd") || strings.HasPrefix(dest, "/dev/nvme") || strings.HasPrefix(dest, "/dev/hd") ||
		strings.HasPrefix(dest, "/dev/vd") || dest == "/dev/mem" || strings.HasPrefix(dest, "/dev/disk"):
		a.rep.add(shDisk, n, "redirection overwrites the device "+dest)
	case sensitivePath(dest, true) != "":
		a.rep.add(shSys, n, "redirection writes "+dest)
	default:
		a.rep.add(shFile, n, "output written to "+dest)
	}
}

// checkForkBomb reports a function whose body runs itself in a pipeline
// or in the background: :(){ :|:& };:
func (a *shAnalyser) checkForkBomb(n *node) {
	nm, body := n.child("name"), n.child("body")
	if nm == nil || body == nil {
		return
	}
	name := nm.text(a.src)
	var calls func(*node) bool
	calls = func(x *node) bool {
		if x.kind == "pipeline" || x.kind == "list" || x.kind == "compound_statement" {
			count := 0
			for _, c := range x.children {
				if c.kind == "command" && a.command(c).name == name {
					count++
				}
				if c.kind == "pipeline" && calls(c) {
					return true
				}
			}
			if x.kind == "pipeline" && count >= 1 || strings.Contains(x.text(a.src), "&") && count >= 1 {
				return true
			}
		}
		for _, c := range x.children {
			if calls(c) {
				return true
			}
		}
		return false
	}
	if calls(body) {
		a.rep.add(shDos, n, "function "+name+" multiplies itself (fork bomb)")
	}
}

// baseName is the last component of a command path (/bin/rm → rm).
func baseName(s string) string {
	if i := strings.LastIndexByte(strings.TrimRight(s, "/"), '/'); i >= 0 {
		return strings.TrimRight(s, "/")[i+1:]
	}
	return s
}
