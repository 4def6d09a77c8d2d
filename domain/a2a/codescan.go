package a2a

import "strings"

// code_guard's matcher: one pass over the code's tokens, no regular
// expressions (a scan of 100,000 bytes by eight RE2 patterns took tens of
// milliseconds, long enough to stall the partition's Decide).
//
// The code is read as a stream of tokens: a word ([A-Za-z0-9_]+, compared
// without regard to ASCII case), or any other byte but white space. White
// space, new lines included, separates tokens and is otherwise ignored, as
// \s* was, so eval (x) and eval\n(x) are calls. A pattern is a short run
// of tokens ending at the current one, or a name inside an import
// statement. Strings and comments are read as code, as the seed's regular
// expressions read them: print("eval(x)") matches eval (fail closed). A
// line continuation (a backslash ending a line) is white space too, and a
// comment separates no tokens (scanCode), as for Python: neither hides a
// call.

// The pattern bits, in the order of codePatternNames (sorted).
const (
	patImport uint8 = 1 << iota // __import__
	patCompile
	patEval
	patExec
	patImportlib
	patPopen
	patSystem
	patSubprocess
)

// codePatternNames are the pattern names, by bit.
var codePatternNames = [...]string{"__import__", "compile", "eval", "exec", "importlib", "os.popen", "os.system", "subprocess"}

// codeTok is a token: a word (word true, the text in code[start:end]) or
// one other byte (b).
type codeTok struct {
	word       bool
	b          byte
	start, end int
}

// The states of an import statement.
const (
	stmtNone   = iota
	stmtImport // after "import": every name listed is a module
	stmtFrom   // after "from", before its "import"
)

// codeScan holds the scan's state: the last three tokens (prev[0] the
// latest), the bracket depth, and the import statement being read.
type codeScan struct {
	code    string
	prev    [3]codeTok
	n       int // tokens seen, at most len(prev) counted
	depth   int
	comment bool
	stmt    int
	// stmtDepth is the depth at which the import statement began: a new
	// line at that depth ends it.
	stmtDepth int
	// fromOS: the statement is from os import ...; fromMod: the module
	// of a from statement has been read.
	fromOS, fromMod bool
	found           uint8
}

// is reports whether t is the word w (lower case) in any ASCII case.
func (c *codeScan) is(t codeTok, w string) bool {
	if !t.word || t.end-t.start != len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		b := c.code[t.start+i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != w[i] {
			return false
		}
	}
	return true
}

// isByte reports whether prev[i] is the other byte b.
func (c *codeScan) isByte(i int, b byte) bool {
	return i < c.n && !c.prev[i].word && c.prev[i].b == b
}

// isWord reports whether prev[i] is the word w.
func (c *codeScan) isWord(i int, w string) bool {
	return i < c.n && c.is(c.prev[i], w)
}

func isWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_'
}

// scanCode returns the bits of the patterns code holds. Code with a '#'
// is scanned twice: as it is, and with each comment (from a '#' to the
// end of its line) left out, so that the tokens either side of a comment
// inside brackets, which Python reads as adjacent (f(eval # x⏎(y))), are
// adjacent to the scan too; the patterns of both scans count (a '#' in a
// string is not a comment, and its line's tail is matched by the first).
//
// JavaScript's comments, /* ... */ and // to the end of the line, are
// left out of that second scan too: a code payload may name another
// language than Python, and in Python "/*" and "//" cannot stand between
// a name and its call.
func scanCode(code string) uint8 {
	found := scanTokens(code, false)
	if strings.IndexByte(code, '#') >= 0 || strings.Contains(code, "/*") || strings.Contains(code, "//") {
		found |= scanTokens(code, true)
	}
	return found
}

// scanTokens scans code's tokens, leaving out comments when
// skipComments.
func scanTokens(code string, skipComments bool) uint8 {
	c := codeScan{code: code}
	for i := 0; i < len(code); {
		b := code[i]
		switch {
		case skipComments && (b == '#' || b == '/' && i+1 < len(code) && code[i+1] == '/'):
			for i < len(code) && code[i] != '\n' {
				i++
			}
			continue
		case skipComments && b == '/' && i+1 < len(code) && code[i+1] == '*':
			if end := strings.Index(code[i+2:], "*/"); end >= 0 {
				i += 2 + end + 2
			} else {
				i = len(code)
			}
			continue
		case b == '\\' && !c.comment && continuation(code, i+1) > i+1:
			// A line continuation is white space between tokens.
			i = continuation(code, i+1)
			continue
		case b == ' ' || b == '\t' || b == '\r' || b == '\f' || b == '\v':
			i++
			continue
		case b == '\n':
			c.newline()
			i++
			continue
		case isWordByte(b):
			j := i + 1
			for j < len(code) && isWordByte(code[j]) {
				j++
			}
			c.word(codeTok{word: true, start: i, end: j})
			i = j
		default:
			c.other(codeTok{b: b, start: i, end: i + 1})
			i++
		}
	}
	return c.found
}

// continuation returns the offset past the line end at code[i:] (\n,
// \r\n or \r), i when there is none there.
func continuation(code string, i int) int {
	if i < len(code) && code[i] == '\r' {
		i++
	}
	if i < len(code) && code[i] == '\n' {
		i++
	}
	return i
}

// push makes t the latest token.
func (c *codeScan) push(t codeTok) {
	c.prev[2], c.prev[1], c.prev[0] = c.prev[1], c.prev[0], t
	c.n = min(c.n+1, len(c.prev))
}

func (c *codeScan) newline() {
	c.comment = false
	// A backslash continues the line.
	if c.stmt != stmtNone && c.depth <= c.stmtDepth && !c.isByte(0, '\\') {
		c.stmt = stmtNone
	}
}

func (c *codeScan) word(t codeTok) {
	switch c.stmt {
	case stmtNone:
		switch {
		case c.is(t, "import"):
			c.begin(stmtImport)
		case c.is(t, "from"):
			c.begin(stmtFrom)
		}
	case stmtFrom:
		switch {
		case c.is(t, "import"):
			c.stmt = stmtImport
		case !c.fromMod:
			c.fromMod, c.fromOS = true, c.is(t, "os")
		}
	}
	if c.stmt != stmtNone {
		// A module or a name of an import statement.
		switch {
		case c.is(t, "subprocess"):
			c.found |= patSubprocess
		case c.is(t, "importlib"):
			c.found |= patImportlib
		case c.stmt == stmtImport && c.fromOS && c.is(t, "system"):
			c.found |= patSystem
		case c.stmt == stmtImport && c.fromOS && c.is(t, "popen"):
			c.found |= patPopen
		}
	}
	// __import__("subprocess"), import_module('subprocess').
	if c.is(t, "subprocess") && (c.isByte(0, '"') || c.isByte(0, '\'')) && c.isByte(1, '(') &&
		(c.isWord(2, "__import__") || c.isWord(2, "import_module")) {
		c.found |= patSubprocess
	}
	c.push(t)
}

// begin starts an import statement.
func (c *codeScan) begin(stmt int) {
	c.stmt, c.stmtDepth, c.fromOS, c.fromMod = stmt, c.depth, false, false
}

func (c *codeScan) other(t codeTok) {
	switch t.b {
	case '(':
		c.call()
		c.open()
	case '[', '{':
		c.open()
	case ')', ']', '}':
		if !c.comment && c.depth > 0 {
			c.depth--
		}
	case '.':
		switch {
		case c.isWord(0, "subprocess"):
			c.found |= patSubprocess
		case c.isWord(0, "importlib"):
			c.found |= patImportlib
		}
		if c.stmt == stmtFrom {
			// from os.path import system is not os's system.
			c.fromOS = false
		}
	case ';':
		c.stmt = stmtNone
	case '#':
		c.comment = true
	}
	c.push(t)
}

func (c *codeScan) open() {
	if !c.comment {
		c.depth++
	}
}

// call matches the calls: the token before the '(' is the function.
func (c *codeScan) call() {
	switch {
	case c.isWord(0, "eval"):
		c.found |= patEval
	case c.isWord(0, "exec"):
		c.found |= patExec
	case c.isWord(0, "__import__"):
		c.found |= patImport
	case c.isWord(0, "compile"):
		// The builtin, not a method (re.compile), unless it is the
		// builtins module's.
		if !c.isByte(1, '.') || c.isWord(2, "builtins") {
			c.found |= patCompile
		}
	case c.isWord(0, "system") && c.isByte(1, '.') && c.isWord(2, "os"):
		c.found |= patSystem
	case c.isWord(0, "popen") && c.isByte(1, '.') && c.isWord(2, "os"):
		c.found |= patPopen
	}
}
