package stats

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the claim grammar.
const (
	// MaxClaimTokens is the most tokens a claim may hold (QWED-REQ-004).
	MaxClaimTokens = 256
	// MaxConditions is the most conditions a where clause may hold.
	MaxConditions = 16
)

type tkind int

const (
	kWord   tkind = iota // identifier or keyword
	kQuoted              // 'text' or "text"
	kTick                // `column name`
	kNum                 // decimal number
	kOp                  // = != < <= > >=
	kPunct               // ( ) , : { } *
	kEOF
)

type tok struct {
	kind tkind
	text string // source text (unquoted for kQuoted / kTick; canonical for kOp)
	low  string // lower-cased text of a kWord
	pos  int    // byte offset in the claim
}

// syntaxError is a claim outside the grammar: where, what was expected and
// what was found (QWED protocol v1.0 §8.4 details).
type syntaxError struct {
	pos      int
	expected string
	found    string
	limit    bool // a limit, not a syntax error (QWED-REQ-004)
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("at byte %d: expected %s, found %s", e.pos, e.expected, e.found)
}

func lexClaim(s string) ([]tok, *syntaxError) {
	var out []tok
	i := 0
	for i < len(s) {
		if len(out) >= MaxClaimTokens {
			return nil, &syntaxError{pos: i, expected: fmt.Sprintf("at most %d tokens", MaxClaimTokens), found: "more", limit: true}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r >= '0' && r <= '9' || ((r == '-' || r == '+' || r == '.') && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '.')):
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' ||
				((s[j] == 'e' || s[j] == 'E') && j+1 < len(s) && (s[j+1] >= '0' && s[j+1] <= '9' || s[j+1] == '-' || s[j+1] == '+')) ||
				((s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			text := strings.TrimSuffix(s[i:j], ".")
			if text == "" || text == "." {
				i = j
				continue
			}
			out = append(out, tok{kind: kNum, text: text, pos: i})
			i += len(text)
		case unicode.IsLetter(r) || r == '_':
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) || r2 == '_' || (r2 == '.' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
					j += sz
					continue
				}
				break
			}
			out = append(out, tok{kind: kWord, text: s[i:j], low: strings.ToLower(s[i:j]), pos: i})
			i = j
		case r == '\'' || r == '"' || r == '`':
			j := strings.IndexRune(s[i+1:], r)
			if j < 0 {
				return nil, &syntaxError{pos: i, expected: "closing " + string(r), found: "end of input"}
			}
			k := kQuoted
			if r == '`' {
				k = kTick
			}
			out = append(out, tok{kind: k, text: s[i+1 : i+1+j], pos: i})
			if r == '"' {
				out[len(out)-1].low = "\"" // a double-quoted text may name a column
			}
			i += j + 2
		case r == '=' || r == '!' || r == '<' || r == '>' || r == '≤' || r == '≥' || r == '≠':
			j := i + size
			op := string(r)
			if j < len(s) && (s[j] == '=' || (r == '<' && s[j] == '>')) && size == 1 {
				op += string(s[j])
				j++
			}
			switch op {
			case "==":
				op = "="
			case "<>", "≠":
				op = "!="
			case "≤":
				op = "<="
			case "≥":
				op = ">="
			case "!":
				return nil, &syntaxError{pos: i, expected: "an operator (= != < <= > >=)", found: "!"}
			}
			out = append(out, tok{kind: kOp, text: op, pos: i})
			i = j
		case strings.ContainsRune("(),:{}*", r):
			out = append(out, tok{kind: kPunct, text: string(r), pos: i})
			i += size
		case r == '.' || r == '?':
			i += size // sentence punctuation
		default:
			return nil, &syntaxError{pos: i, expected: "a word, number, quoted text or operator", found: fmt.Sprintf("%q", r)}
		}
	}
	out = append(out, tok{kind: kEOF, text: "end of input", pos: len(s)})
	return out, nil
}

// Condition is one "column op literal" of a where clause.
type Condition struct {
	Column string
	Op     string
	Value  string
}

// GroupValue is one "key: value" of a group-by claim.
type GroupValue struct {
	Key   string
	Value string
}

// Claim is a parsed stats claim (see the grammar in doc.go).
type Claim struct {
	GroupBy string   // group-by column, "" when none
	Arg     string   // "argmax" or "argmin" (group-by only), "" when none
	Func    string   // count, sum, mean, median, min, max, percentile, variance, std, correlation
	Columns []string // the function's columns (none for count of rows)
	Pct     *big.Rat // percentile as a fraction in [0, 1]
	PctText string   // the percentile as written ("90")
	Where   []Condition
	Op      string // = != < <= > >=
	Value   string // the claimed number (no group-by, no arg)
	Key     string // the claimed group (arg)
	Groups  []GroupValue
}

// Statistic is the claim's statistic in canonical form, e.g.
// "sum(qty) where region = 'EU'".
func (c Claim) Statistic() string {
	var b strings.Builder
	if c.GroupBy != "" {
		b.WriteString("group by " + quoteCol(c.GroupBy) + ": ")
	}
	if c.Arg != "" {
		b.WriteString(c.Arg + " ")
	}
	b.WriteString(c.Func + "(")
	cols := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		cols[i] = quoteCol(col)
	}
	if len(cols) == 0 && c.Func == "count" {
		cols = []string{"*"}
	}
	b.WriteString(strings.Join(cols, ", "))
	if c.Func == "percentile" {
		b.WriteString(", " + c.PctText)
	}
	b.WriteString(")")
	for i, w := range c.Where {
		if i == 0 {
			b.WriteString(" where ")
		} else {
			b.WriteString(" and ")
		}
		b.WriteString(quoteCol(w.Column) + " " + w.Op + " '" + w.Value + "'")
	}
	return b.String()
}

func quoteCol(c string) string {
	for _, r := range c {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return "`" + c + "`"
		}
	}
	return c
}

type parser struct {
	toks []tok
	i    int
}

func (p *parser) peek() tok { return p.toks[p.i] }
func (p *parser) next() tok {
	t := p.toks[p.i]
	if t.kind != kEOF {
		p.i++
	}
	return t
}

func (p *parser) isWord(ws ...string) bool {
	t := p.peek()
	if t.kind != kWord {
		return false
	}
	for _, w := range ws {
		if t.low == w {
			return true
		}
	}
	return false
}

// words consumes the word sequence ws if it is next.
func (p *parser) words(ws ...string) bool {
	for k, w := range ws {
		t := p.toks[min(p.i+k, len(p.toks)-1)]
		if t.kind != kWord || t.low != w {
			return false
		}
	}
	p.i += len(ws)
	return true
}

func (p *parser) fail(expected string) *syntaxError {
	t := p.peek()
	found := t.text
	switch t.kind {
	case kEOF:
	case kQuoted:
		found = "'" + t.text + "'"
	default:
		found = fmt.Sprintf("%q", t.text)
	}
	return &syntaxError{pos: t.pos, expected: expected, found: found}
}

func (p *parser) punct(s string) bool {
	if t := p.peek(); t.kind == kPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectPunct(s string) *syntaxError {
	if !p.punct(s) {
		return p.fail(fmt.Sprintf("%q", s))
	}
	return nil
}

// keywords that never name a column without quoting.
var keywords = map[string]bool{
	"where": true, "for": true, "when": true, "and": true, "is": true, "are": true, "was": true,
	"equals": true, "not": true, "of": true, "by": true, "group": true, "the": true,
}

func (p *parser) column() (string, *syntaxError) {
	t := p.peek()
	switch {
	case t.kind == kTick || (t.kind == kQuoted && t.low == "\""):
		p.i++
		return t.text, nil
	case t.kind == kWord && !keywords[t.low]:
		p.i++
		return t.text, nil
	}
	return "", p.fail("a column name")
}

// ParseClaim parses a stats claim (grammar in doc.go).
func ParseClaim(s string) (Claim, *syntaxError) {
	toks, err := lexClaim(s)
	if err != nil {
		return Claim{}, err
	}
	p := &parser{toks: toks}
	var c Claim
	if p.words("group", "by") {
		col, err := p.column()
		if err != nil {
			return c, err
		}
		c.GroupBy = col
		if !p.punct(":") && !p.punct(",") {
			return c, p.fail(`":" after the group-by column`)
		}
	}
	p.words("the")
	if c.GroupBy != "" {
		switch {
		case p.words("argmax"), p.words("highest"), p.words("largest"):
			c.Arg = "argmax"
		case p.words("argmin"), p.words("lowest"), p.words("smallest"):
			c.Arg = "argmin"
		}
	}
	if err := p.aggregate(&c); err != nil {
		return c, err
	}
	if p.isWord("where", "for", "when") {
		p.next()
		for {
			if len(c.Where) == MaxConditions {
				return c, &syntaxError{pos: p.peek().pos, expected: fmt.Sprintf("at most %d conditions", MaxConditions), found: "more", limit: true}
			}
			cond, err := p.condition()
			if err != nil {
				return c, err
			}
			c.Where = append(c.Where, cond)
			if !p.words("and") {
				break
			}
		}
	}
	op, err := p.comparison()
	if err != nil {
		return c, err
	}
	c.Op = op
	switch {
	case c.Arg != "":
		if op != "=" && op != "!=" {
			return c, &syntaxError{pos: p.peek().pos, expected: "is / is not before the group of " + c.Arg, found: op}
		}
		key, ok := p.literal()
		if !ok {
			return c, p.fail("a group key")
		}
		c.Key = key
	case c.GroupBy != "":
		braces := p.punct("{")
		seen := map[string]bool{}
		for {
			at := p.peek()
			key, ok := p.literal()
			if !ok {
				return c, p.fail("a group key")
			}
			if seen[key] {
				return c, &syntaxError{pos: at.pos, expected: "each group once", found: fmt.Sprintf("%q again", key)}
			}
			seen[key] = true
			if !p.punct(":") && !(p.peek().kind == kOp && p.peek().text == "=" && p.next().kind == kOp) {
				return c, p.fail(`":" after the group key`)
			}
			t := p.next()
			if t.kind != kNum {
				p.i--
				return c, p.fail("a number")
			}
			c.Groups = append(c.Groups, GroupValue{Key: key, Value: t.text})
			if !p.punct(",") && !p.words("and") {
				break
			}
		}
		if braces {
			if err := p.expectPunct("}"); err != nil {
				return c, err
			}
		}
	default:
		t := p.next()
		if t.kind != kNum {
			p.i--
			return c, p.fail("a number")
		}
		c.Value = t.text
	}
	if p.peek().kind != kEOF {
		return c, p.fail("end of the claim")
	}
	return c, nil
}

// funcNames maps the accepted function names to the canonical ones.
var funcNames = map[string]string{
	"mean": "mean", "average": "mean", "avg": "mean",
	"sum": "sum", "total": "sum",
	"median": "median",
	"min":    "min", "minimum": "min",
	"max": "max", "maximum": "max",
	"count": "count",
	"std":   "std", "stdev": "std", "stddev": "std", "sd": "std",
	"var": "variance", "variance": "variance",
	"corr": "correlation", "correlation": "correlation", "pearson": "correlation",
	"percentile": "percentile", "quantile": "quantile",
	"q1": "q1", "q3": "q3",
}

func (p *parser) aggregate(c *Claim) *syntaxError {
	if p.words("number", "of", "rows") || p.words("row", "count") {
		c.Func = "count"
		return nil
	}
	if p.words("standard", "deviation") {
		c.Func = "std"
	} else {
		t := p.peek()
		if t.kind != kWord {
			return p.fail("a statistic (mean, sum, median, min, max, count, std, variance, pNN, percentile, correlation)")
		}
		name, ok := funcNames[t.low]
		if !ok {
			if pct, ok := pName(t.low); ok {
				name = "percentile"
				c.PctText = t.low[1:]
				c.Pct = pct
			} else {
				return p.fail("a statistic (mean, sum, median, min, max, count, std, variance, pNN, percentile, correlation)")
			}
		}
		p.next()
		switch name {
		case "q1":
			name, c.Pct, c.PctText = "percentile", big.NewRat(1, 4), "25"
		case "q3":
			name, c.Pct, c.PctText = "percentile", big.NewRat(3, 4), "75"
		case "median":
			c.Pct = big.NewRat(1, 2)
		}
		c.Func = name
	}
	want := 1
	switch c.Func {
	case "correlation":
		want = 2
	}
	paren := p.punct("(")
	if !paren && !p.words("of") {
		if c.Func == "count" {
			if p.peek().kind == kWord && !keywords[p.peek().low] || p.peek().kind == kTick {
				col, err := p.column()
				if err != nil {
					return err
				}
				c.Columns = []string{col}
			}
			return nil
		}
		if p.peek().kind != kWord && p.peek().kind != kTick {
			return p.fail(`"(" or "of" and a column`)
		}
	}
	if c.Func == "count" && paren && p.punct("*") {
		return p.expectPunct(")")
	}
	if c.Func == "count" && !paren && p.words("rows") {
		return nil
	}
	for k := 0; k < want; k++ {
		if k > 0 && !p.punct(",") && !p.words("and") {
			return p.fail(`"," and a second column`)
		}
		col, err := p.column()
		if err != nil {
			return err
		}
		c.Columns = append(c.Columns, col)
	}
	if c.Func == "percentile" && c.Pct == nil || c.Func == "quantile" {
		if !p.punct(",") {
			return p.fail(`"," and the percentile`)
		}
		t := p.next()
		r, _, ok := ParseDecimal(t.text)
		if t.kind != kNum || !ok {
			p.i--
			return p.fail("the percentile (0..100) or quantile (0..1)")
		}
		quantile := c.Func == "quantile"
		if !quantile {
			r.Quo(r, big.NewRat(100, 1))
		}
		if r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
			p.i--
			return p.fail("the percentile in 0..100 (quantile in 0..1)")
		}
		c.Func, c.Pct, c.PctText = "percentile", r, t.text
		if quantile {
			c.PctText = ratDecimal(new(big.Rat).Mul(r, big.NewRat(100, 1)))
		}
	}
	if paren {
		return p.expectPunct(")")
	}
	return nil
}

// pName reads "p90" or "p99.9" as the fraction 0.90 / 0.999.
func pName(s string) (*big.Rat, bool) {
	if len(s) < 2 || s[0] != 'p' || s[1] < '0' || s[1] > '9' {
		return nil, false
	}
	r, _, ok := ParseDecimal(s[1:])
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(100, 1)) > 0 {
		return nil, false
	}
	return r.Quo(r, big.NewRat(100, 1)), true
}

func (p *parser) literal() (string, bool) {
	t := p.peek()
	switch t.kind {
	case kQuoted, kNum, kTick:
		p.i++
		return t.text, true
	case kWord:
		p.i++
		return t.text, true
	}
	return "", false
}

func (p *parser) condition() (Condition, *syntaxError) {
	col, err := p.column()
	if err != nil {
		return Condition{}, err
	}
	op := ""
	switch t := p.peek(); {
	case t.kind == kOp:
		op = p.next().text
	case p.words("is", "not"):
		op = "!="
	case p.words("is"), p.words("equals"):
		op = "="
	default:
		return Condition{}, p.fail("a condition operator (= != < <= > >=)")
	}
	v, ok := p.literal()
	if !ok {
		return Condition{}, p.fail("a value to compare the column with")
	}
	return Condition{Column: col, Op: op, Value: v}, nil
}

func negateOp(op string) string {
	switch op {
	case "=":
		return "!="
	case "!=":
		return "="
	case "<":
		return ">="
	case ">=":
		return "<"
	case ">":
		return "<="
	}
	return ">"
}

// comparison reads the claim's comparison: a symbol or a phrase.
func (p *parser) comparison() (string, *syntaxError) {
	if t := p.peek(); t.kind == kOp {
		p.next()
		return t.text, nil
	}
	neg := false
	verb := p.words("is") || p.words("are") || p.words("was") || p.words("equals")
	if p.words("not") {
		neg = true
	}
	op := ""
	switch {
	case p.words("equal", "to"):
		op = "="
	case p.words("less", "than"), p.words("lower", "than"), p.words("smaller", "than"), p.words("under"), p.words("below"):
		op = "<"
	case p.words("greater", "than"), p.words("more", "than"), p.words("higher", "than"), p.words("larger", "than"), p.words("over"), p.words("above"), p.words("exceeds"):
		op = ">"
	case p.words("at", "least"):
		op = ">="
	case p.words("at", "most"):
		op = "<="
	case p.words("approximately"), p.words("about"), p.words("around"), p.words("roughly"), verb:
		op = "="
	default:
		if t := p.peek(); t.kind == kOp {
			p.next()
			op = t.text
		} else {
			return "", p.fail("a comparison (=, !=, <, <=, >, >=, is, is not, is less than, is at least, ...)")
		}
	}
	if neg {
		op = negateOp(op)
	}
	return op, nil
}
