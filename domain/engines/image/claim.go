package image

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a claim token.
type tokKind int

const (
	tWord  tokKind = iota // a lower-cased word
	tNum                  // a decimal number
	tDims                 // WxH
	tRatio                // a:b or a/b
	tOp                   // = == != < <= > >=
	tSep                  // , ;
)

type token struct {
	kind tokKind
	text string // the source text
	word string // tWord: lower-cased; tOp: the operator
	a, b string // tNum: a; tDims, tRatio: a and b
}

// maxNumberLen bounds the digits of one number in a claim.
const maxNumberLen = 30

type claimError struct {
	code    string
	msg     string
	details map[string]any
}

func lex(s string) ([]token, *claimError) {
	var toks []token
	i := 0
	digits := func(j int) int {
		for j < len(s) && (s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j
	}
	number := func(j int) (string, int) {
		k := digits(j)
		if k < len(s)-1 && s[k] == '.' && s[k+1] >= '0' && s[k+1] <= '9' {
			k = digits(k + 1)
		}
		return s[j:k], k
	}
	skipSpace := func(j int) int {
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		return j
	}
	for i < len(s) {
		if len(toks) > MaxClaimTokens {
			return nil, &claimError{code: "QWED-REQ-004", msg: "the claim has too many tokens", details: map[string]any{"limit": MaxClaimTokens}}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r >= '0' && r <= '9':
			a, k := number(i)
			if len(a) > maxNumberLen {
				return nil, &claimError{code: "QWED-REQ-004", msg: "a number in the claim is too long", details: map[string]any{"position": i, "limit": maxNumberLen}}
			}
			// WxH, a:b, a/b
			m := skipSpace(k)
			sep, sepLen := rune(0), 0
			if m < len(s) {
				sep, sepLen = utf8.DecodeRuneInString(s[m:])
			}
			if sep == 'x' || sep == 'X' || sep == '×' || sep == ':' || sep == '/' {
				n := skipSpace(m + sepLen)
				if n < len(s) && s[n] >= '0' && s[n] <= '9' {
					b, e := number(n)
					if len(b) > maxNumberLen {
						return nil, &claimError{code: "QWED-REQ-004", msg: "a number in the claim is too long", details: map[string]any{"position": n, "limit": maxNumberLen}}
					}
					kind := tDims
					if sep == ':' || sep == '/' {
						kind = tRatio
					}
					toks = append(toks, token{kind: kind, text: s[i:e], a: a, b: b})
					i = e
					continue
				}
			}
			toks = append(toks, token{kind: tNum, text: a, a: a})
			i = k
		case unicode.IsLetter(r):
			k := i
			for k < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[k:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) || r2 == '\'' || r2 == '’' {
					k += sz
					continue
				}
				break
			}
			w := strings.ReplaceAll(strings.ToLower(s[i:k]), "’", "'")
			toks = append(toks, token{kind: tWord, text: s[i:k], word: w})
			i = k
		case r == ',' || r == ';':
			toks = append(toks, token{kind: tSep, text: string(r)})
			i += size
		case r == '=' || r == '<' || r == '>' || r == '!' || r == '≤' || r == '≥' || r == '≠':
			op := string(r)
			k := i + size
			if k < len(s) && s[k] == '=' && r != '≤' && r != '≥' && r != '≠' {
				op += "="
				k++
			}
			switch op {
			case "==":
				op = "="
			case "≤":
				op = "<="
			case "≥":
				op = ">="
			case "≠":
				op = "!="
			case "!":
				toks = append(toks, token{kind: tWord, text: "!", word: "!"})
				i = k
				continue
			}
			toks = append(toks, token{kind: tOp, text: s[i:k], word: op})
			i = k
		case r == '.' || r == '?' || r == '"' || r == '\'' || r == '(' || r == ')':
			i += size
		default:
			toks = append(toks, token{kind: tWord, text: string(r), word: string(r)})
			i += size
		}
	}
	if len(toks) > MaxClaimTokens {
		return nil, &claimError{code: "QWED-REQ-004", msg: "the claim has too many tokens", details: map[string]any{"limit": MaxClaimTokens}}
	}
	return toks, nil
}

// The vocabulary of the claim grammar (see doc.go).
var (
	fillerWords = set("the", "a", "an", "image", "picture", "photo", "photograph", "file", "it", "its", "this", "that", "of", "at", "in", "with", "has", "have", "is", "are", "was", "be", "big", "large", "exactly", "encoded", "as", "pixel")
	formatNames = map[string]string{
		"png": "png", "jpeg": "jpeg", "jpg": "jpeg", "jpe": "jpeg", "gif": "gif", "webp": "webp",
		"bmp": "bmp", "tiff": "tiff", "tif": "tiff", "svg": "svg", "heic": "heic", "heif": "heif",
		"avif": "avif", "ico": "ico", "jxl": "jxl", "psd": "psd", "pdf": "pdf",
	}
	orientations = set("landscape", "portrait", "square")
	pxUnits      = set("px", "pixels", "pixel")
	byteUnits    = map[string]int64{
		"b": 1, "byte": 1, "bytes": 1,
		"kb": 1000, "kib": 1024, "mb": 1000 * 1000, "mib": 1 << 20, "gb": 1000 * 1000 * 1000, "gib": 1 << 30,
	}
	propertyWords = map[string]string{
		"width": "width", "wide": "width", "height": "height", "tall": "height", "high": "height",
		"format": "format", "type": "format", "size": "size", "filesize": "size",
		"dimensions": "dimensions", "dimension": "dimensions", "resolution": "dimensions",
		"ratio": "aspect_ratio", "aspect": "aspect_ratio", "orientation": "orientation",
		"pixels": "pixels",
	}
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// value is one stated value of a clause.
type value struct {
	kind   string // "number", "dims", "ratio", "format", "orientation"
	text   string
	a, b   string // numbers (a; dims and ratio: a, b)
	unit   string // number: "", "px" or a byte unit
	format string
}

// clause is one parsed clause: the atoms it states, or why it is
// unsupported.
type clause struct {
	text   string
	atoms  []atom
	reason string // non-empty: unsupported
}

type atom struct {
	property string
	op       string
	val      value
}

func parseClaim(q string) ([]clause, *claimError) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	var groups [][]token
	cur := []token{}
	for _, t := range toks {
		if t.kind == tSep || (t.kind == tWord && t.word == "and") {
			if len(cur) > 0 {
				groups = append(groups, cur)
			}
			cur = []token{}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	if len(groups) == 0 {
		return nil, &claimError{code: "QWED-REQ-003", msg: "the claim states nothing", details: map[string]any{"position": 0, "expected": "a claim such as \"width is 640\"", "found": "end of input"}}
	}
	if len(groups) > MaxClauses {
		return nil, &claimError{code: "QWED-REQ-004", msg: "the claim has too many clauses", details: map[string]any{"clauses": len(groups), "limit": MaxClauses}}
	}
	out := make([]clause, 0, len(groups))
	for _, g := range groups {
		out = append(out, parseClause(g))
	}
	return out, nil
}

func clauseText(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.text
	}
	return strings.Join(parts, " ")
}

func negate(op string) string {
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
	default: // "<="
		return ">"
	}
}

// phrases maps multi-word comparison phrases to operators (longest first).
var phrases = []struct {
	words []string
	op    string
}{
	{[]string{"no", "more", "than"}, "<="},
	{[]string{"no", "less", "than"}, ">="},
	{[]string{"no", "larger", "than"}, "<="},
	{[]string{"no", "smaller", "than"}, ">="},
	{[]string{"equal", "to"}, "="},
	{[]string{"at", "least"}, ">="},
	{[]string{"at", "most"}, "<="},
	{[]string{"less", "than"}, "<"},
	{[]string{"smaller", "than"}, "<"},
	{[]string{"fewer", "than"}, "<"},
	{[]string{"more", "than"}, ">"},
	{[]string{"greater", "than"}, ">"},
	{[]string{"larger", "than"}, ">"},
	{[]string{"bigger", "than"}, ">"},
	{[]string{"under"}, "<"},
	{[]string{"below"}, "<"},
	{[]string{"over"}, ">"},
	{[]string{"above"}, ">"},
	{[]string{"exceeds"}, ">"},
	{[]string{"equals"}, "="},
}

func parseClause(ts []token) clause {
	c := clause{text: clauseText(ts)}
	op, negated, opSeen := "=", false, false
	property := ""
	var vals []value
	var unknown []string
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		switch t.kind {
		case tOp:
			if opSeen && t.word != "=" {
				c.reason = "more than one comparison in one clause"
				return c
			}
			if t.word != "=" || !opSeen {
				op, opSeen = t.word, true
			}
			continue
		case tDims:
			vals = append(vals, value{kind: "dims", text: t.text, a: t.a, b: t.b})
			continue
		case tRatio:
			vals = append(vals, value{kind: "ratio", text: t.text, a: t.a, b: t.b})
			continue
		case tNum:
			v := value{kind: "number", text: t.text, a: t.a}
			if i+1 < len(ts) && ts[i+1].kind == tWord {
				w := ts[i+1].word
				if pxUnits[w] {
					v.unit, v.text = "px", t.text+" "+ts[i+1].text
					i++
				} else if _, ok := byteUnits[w]; ok {
					v.unit, v.text = w, t.text+" "+ts[i+1].text
					i++
				}
			}
			vals = append(vals, v)
			continue
		}
		w := t.word
		// comparison phrases
		matched := false
		for _, p := range phrases {
			if i+len(p.words) > len(ts) {
				continue
			}
			ok := true
			for j, pw := range p.words {
				if ts[i+j].kind != tWord || ts[i+j].word != pw {
					ok = false
					break
				}
			}
			if ok {
				if opSeen {
					c.reason = "more than one comparison in one clause"
					return c
				}
				op, opSeen = p.op, true
				i += len(p.words) - 1
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		switch {
		case w == "not" || w == "isn't" || w == "aren't" || w == "!":
			negated = !negated
		case w == "aspect" && i+1 < len(ts) && ts[i+1].kind == tWord && ts[i+1].word == "ratio":
			property = setProp(property, "aspect_ratio", &c)
			i++
		case (w == "file" || w == "byte") && i+1 < len(ts) && ts[i+1].kind == tWord && ts[i+1].word == "size":
			property = setProp(property, "size", &c)
			i++
		case w == "pixel" && i+1 < len(ts) && ts[i+1].kind == tWord && ts[i+1].word == "count":
			property = setProp(property, "pixels", &c)
			i++
		case propertyWords[w] != "":
			property = setProp(property, propertyWords[w], &c)
		case formatNames[w] != "":
			vals = append(vals, value{kind: "format", text: t.text, format: formatNames[w]})
		case orientations[w]:
			vals = append(vals, value{kind: "orientation", text: w})
		case fillerWords[w]:
		default:
			unknown = append(unknown, t.text)
		}
		if c.reason != "" {
			return c
		}
	}
	if len(unknown) > 0 {
		c.reason = fmt.Sprintf("%q is not a property read from the image header (format, width, height, size, pixels, aspect ratio, orientation); what the image shows is not decided", strings.Join(unknown, " "))
		return c
	}
	if negated {
		op = negate(op)
	}
	if len(vals) == 0 {
		c.reason = "the clause states no value"
		return c
	}
	if property != "" && len(vals) > 1 {
		c.reason = "one property with more than one value"
		return c
	}
	for _, v := range vals {
		p, reason := propertyOf(property, v)
		if reason != "" {
			c.reason = reason
			c.atoms = nil
			return c
		}
		if (p == "format" || p == "dimensions" || p == "orientation") && op != "=" && op != "!=" {
			c.reason = p + " can only be compared with is / is not"
			c.atoms = nil
			return c
		}
		c.atoms = append(c.atoms, atom{property: p, op: op, val: v})
	}
	return c
}

func setProp(cur, p string, c *clause) string {
	if cur != "" && cur != p {
		c.reason = "more than one property in one clause"
	}
	return p
}

// propertyOf checks that v is a value of property (or infers the property
// from v when none is named).
func propertyOf(property string, v value) (string, string) {
	switch property {
	case "":
		switch v.kind {
		case "format":
			return "format", ""
		case "dims":
			return "dimensions", ""
		case "orientation":
			return "orientation", ""
		case "ratio":
			return "aspect_ratio", ""
		case "number":
			if v.unit == "px" {
				return "pixels", ""
			}
			if v.unit != "" {
				return "size", ""
			}
		}
		return "", fmt.Sprintf("%q does not say which property it states", v.text)
	case "width", "height", "pixels":
		if v.kind == "number" && (v.unit == "" || v.unit == "px") {
			return property, ""
		}
	case "size":
		if v.kind == "dims" {
			return "dimensions", ""
		}
		if v.kind == "number" && v.unit != "px" {
			return "size", ""
		}
	case "dimensions":
		if v.kind == "dims" {
			return property, ""
		}
	case "format":
		if v.kind == "format" {
			return property, ""
		}
	case "aspect_ratio":
		if v.kind == "ratio" || (v.kind == "number" && v.unit == "") {
			return property, ""
		}
	case "orientation":
		if v.kind == "orientation" {
			return property, ""
		}
	}
	return "", fmt.Sprintf("%q is not a value of %s", v.text, property)
}
