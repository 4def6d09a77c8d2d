package code

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsbash "github.com/tree-sitter/tree-sitter-bash/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// node is one syntax-tree node, copied out of tree-sitter's C tree in one
// walk so that the analysers run in Go without cgo calls and the C tree is
// freed before analysis starts.
type node struct {
	kind     string
	field    string // the field name under the parent ("" when none)
	start    int    // byte offsets in the source
	end      int
	row      int // 0-based start line
	col      int // 0-based start column in bytes
	named    bool
	missing  bool
	parent   *node
	children []*node
}

// text returns the node's source text.
func (n *node) text(src string) string { return src[n.start:n.end] }

// child returns the first child under the field name, nil when none.
func (n *node) child(field string) *node {
	for _, c := range n.children {
		if c.field == field {
			return c
		}
	}
	return nil
}

// namedChildren returns the named children (no punctuation).
func (n *node) namedChildren() []*node {
	out := make([]*node, 0, len(n.children))
	for _, c := range n.children {
		if c.named {
			out = append(out, c)
		}
	}
	return out
}

// grammar is one tree-sitter language with its symbol and field names
// cached (reading names through cgo allocates on every call).
type grammar struct {
	name string
	lang *sitter.Language
	// narrow: the parser reads the source narrowed (narrow.go), its
	// offsets mapped back (the bash grammar).
	narrow bool
	kinds  []string
	named  []bool
	fields []string
}

var (
	grammarsOnce sync.Once
	grammars     map[string]*grammar
)

func loadGrammars() {
	grammars = map[string]*grammar{}
	for name, ptr := range map[string]func() *sitter.Language{
		langPython:     func() *sitter.Language { return sitter.NewLanguage(tspython.Language()) },
		langJavaScript: func() *sitter.Language { return sitter.NewLanguage(tsjs.Language()) },
		langBash:       func() *sitter.Language { return sitter.NewLanguage(tsbash.Language()) },
	} {
		l := ptr()
		g := &grammar{name: name, lang: l, narrow: name == langBash}
		g.kinds = make([]string, l.NodeKindCount())
		g.named = make([]bool, len(g.kinds))
		for i := range g.kinds {
			g.kinds[i] = l.NodeKindForId(uint16(i))
			g.named[i] = l.NodeKindIsNamed(uint16(i))
		}
		g.fields = make([]string, l.FieldCount()+1)
		for i := 1; i < len(g.fields); i++ {
			g.fields[i] = l.FieldNameForId(uint16(i))
		}
		grammars[name] = g
	}
}

func grammarFor(language string) *grammar {
	grammarsOnce.Do(loadGrammars)
	return grammars[language]
}

// limitError is a crossed bound (QWED-REQ-004).
type limitError struct {
	limit string
	max   int
	found int
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s limit exceeded: %d > %d", e.limit, e.found, e.max)
}

// syntaxError is the first ERROR or MISSING node of a tree (QWED-REQ-003).
type syntaxError struct {
	offset   int // byte offset
	line     int // 1-based
	column   int // 1-based, in characters
	expected string
	found    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("syntax error at line %d column %d: expected %s, found %s", e.line, e.column, e.expected, e.found)
}

// parsed is a source text with its syntax tree.
type parsed struct {
	src   string
	root  *node
	nodes int
	depth int
}

// parseChunkBytes is how much source one read callback hands the parser
// (the binding copies each chunk into C memory).
const parseChunkBytes = 8192

// parse parses src with the grammar and copies the tree, enforcing the
// node, depth and parse-work limits. A tree with an ERROR or MISSING node
// is a *syntaxError; a crossed limit a *limitError.
func parse(g *grammar, src string) (*parsed, error) {
	if len(src) > MaxCodeBytes {
		return nil, &limitError{limit: "bytes", max: MaxCodeBytes, found: len(src)}
	}
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(g.lang); err != nil {
		return nil, fmt.Errorf("setting the %s grammar: %w", g.name, err)
	}
	var text []byte
	var back *offsetMap
	if g.narrow {
		text, back = narrow(src)
	} else {
		text = []byte(src)
	}
	checks := 0
	opts := &sitter.ParseOptions{ProgressCallback: func(sitter.ParseState) bool {
		checks++
		return checks > MaxParseChecks
	}}
	tree := p.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i >= len(text) {
			return nil
		}
		return text[i:min(len(text), i+parseChunkBytes)]
	}, nil, opts)
	if tree == nil {
		return nil, &limitError{limit: "parse_steps", max: MaxParseChecks, found: checks}
	}
	defer tree.Close()
	root := tree.RootNode()
	if n := int(root.DescendantCount()); n > MaxNodes {
		return nil, &limitError{limit: "nodes", max: MaxNodes, found: n}
	}
	return copyTree(g, tree, src, back)
}

// copyTree walks the C tree once with a cursor, iteratively (the depth
// limit is checked before anything recurses over the copy). back maps the
// tree's offsets to src (nil: they are src's).
func copyTree(g *grammar, tree *sitter.Tree, src string, back *offsetMap) (*parsed, error) {
	cur := tree.Walk()
	defer cur.Close()
	count := int(tree.RootNode().DescendantCount())
	arena := make([]node, 0, count)
	// Rows and columns are computed from the start byte in Go, names and
	// namedness from the cached symbol tables: a few cgo calls per node.
	lineStarts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lineStarts = append(lineStarts, i+1)
		}
	}
	row := 0
	mk := func(parent *node) *node {
		n := cur.Node()
		start, end := back.source(int(n.StartByte())), back.source(int(n.EndByte()))
		kind, named := "ERROR", true
		if id := int(n.KindId()); id < len(g.kinds) && id != 65535 {
			kind, named = g.kinds[id], g.named[id]
		}
		field := ""
		if fid := int(cur.FieldId()); fid > 0 && fid < len(g.fields) {
			field = g.fields[fid]
		}
		// Pre-order start bytes never decrease: the row only moves on.
		for row+1 < len(lineStarts) && lineStarts[row+1] <= start {
			row++
		}
		for row > 0 && lineStarts[row] > start {
			row--
		}
		arena = append(arena, node{
			kind: kind, field: field, start: start, end: end,
			row: row, col: start - lineStarts[row], named: named,
			missing: start == end && n.IsMissing(), parent: parent,
		})
		nn := &arena[len(arena)-1]
		if parent != nil {
			parent.children = append(parent.children, nn)
		}
		return nn
	}
	root := mk(nil)
	out := &parsed{src: src, root: root, nodes: 1}
	var firstBad *node
	cnode, depth := root, 0
	for {
		var parent *node
		if cur.GotoFirstChild() {
			depth++
			if depth > MaxDepth {
				return nil, &limitError{limit: "depth", max: MaxDepth, found: depth}
			}
			parent = cnode
		} else {
			for {
				if cur.GotoNextSibling() {
					parent = cnode.parent
					break
				}
				if !cur.GotoParent() {
					if firstBad != nil {
						return out, syntaxErrorAt(g, src, firstBad)
					}
					return out, nil
				}
				depth--
				cnode = cnode.parent
			}
		}
		if len(arena) == cap(arena) {
			// The count is exact; more nodes than it would mean a walk
			// error: refuse rather than reallocate under live pointers.
			return nil, &limitError{limit: "nodes", max: count, found: count + 1}
		}
		cnode = mk(parent)
		out.nodes++
		if depth > out.depth {
			out.depth = depth
		}
		if firstBad == nil && (cnode.kind == "ERROR" || cnode.missing) {
			firstBad = cnode
		}
	}
}

// syntaxErrorAt describes the first ERROR or MISSING node.
func syntaxErrorAt(g *grammar, src string, bad *node) *syntaxError {
	e := &syntaxError{offset: bad.start, line: bad.row + 1, column: columnOf(src, bad.start)}
	if bad.missing {
		e.expected = quoteKind(bad.kind)
		e.found = foundAt(src, bad.start)
		return e
	}
	e.expected = "valid " + languageTitle(g.name) + " syntax"
	// An error that runs to the end of the input with a bracket still open
	// is the seed's "expected closing parenthesis, found end of input".
	if strings.TrimSpace(src[bad.end:]) == "" {
		if closer := unclosed(bad, src); closer != "" {
			end := len(strings.TrimRight(src, " \t\r\n"))
			e.offset, e.column = end, columnOf(src, end)
			e.line = strings.Count(src[:end], "\n") + 1
			e.expected, e.found = "closing '"+closer+"'", "end of input"
			return e
		}
	}
	// The first leaf of the ERROR node is the token that could not be
	// placed.
	leaf := bad
	for len(leaf.children) > 0 {
		leaf = leaf.children[0]
	}
	if leaf.end > leaf.start {
		e.found = describeToken(leaf.text(src))
	} else {
		e.found = foundAt(src, bad.start)
	}
	return e
}

// unclosed returns the closer of the innermost bracket left open among
// the leaves of n ("" when all are closed).
func unclosed(n *node, src string) string {
	var stack []string
	var walk func(*node)
	walk = func(n *node) {
		if len(n.children) == 0 {
			switch t := n.text(src); t {
			case "(", "[", "{":
				stack = append(stack, map[string]string{"(": ")", "[": "]", "{": "}"}[t])
			case ")", "]", "}":
				if len(stack) > 0 && stack[len(stack)-1] == t {
					stack = stack[:len(stack)-1]
				}
			}
			return
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(n)
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1]
}

func quoteKind(kind string) string {
	if kind == "" {
		return "a token"
	}
	if strings.ContainsAny(kind, "_") || isWord(kind) && len(kind) > 1 && kind != strings.ToLower(kind) {
		return kind
	}
	return "'" + kind + "'"
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// foundAt names the token starting at offset (or the end of input).
func foundAt(src string, offset int) string {
	rest := strings.TrimLeft(src[offset:], " \t")
	if rest == "" {
		return "end of input"
	}
	if rest[0] == '\n' || rest[0] == '\r' {
		return "end of line"
	}
	end := strings.IndexAny(rest, " \t\r\n")
	if end < 0 {
		end = len(rest)
	}
	return describeToken(rest[:end])
}

func describeToken(tok string) string {
	tok = firstLine(tok)
	if tok == "" {
		return "end of line"
	}
	return "'" + truncate(tok, 40) + "'"
}

// columnOf is the 1-based column of a byte offset, counted in characters.
func columnOf(src string, offset int) int {
	lineStart := strings.LastIndexByte(src[:offset], '\n') + 1
	return utf8.RuneCountInString(src[lineStart:offset]) + 1
}

// charOffset is the 1-based character position of a byte offset in src.
func charOffset(src string, offset int) int {
	return utf8.RuneCountInString(src[:offset]) + 1
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// truncate cuts s to at most n bytes on a character boundary, marking the
// cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func languageTitle(name string) string {
	switch name {
	case langPython:
		return "Python"
	case langJavaScript:
		return "JavaScript"
	case langBash:
		return "shell"
	}
	return name
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
