package sql

import (
	"math/big"
	"strings"
	"unicode/utf8"
)

// The constant folding the three dialects share for the tautology checks
// (QWED protocol v1.0 §5.2.5): LIKE over constants, the functions whose
// value is certain from constant arguments (CHAR, CONCAT, COALESCE,
// IFNULL, NULLIF, LOWER, UPPER, IF, ASCII and LENGTH of ASCII text), and which functions are deterministic
// (two identical calls of one have one value). Anything the engine cannot
// decide folds to unknown, and unknown is never a tautology.

// maxLikeBytes bounds the subject and pattern of a LIKE folded over
// constants (the match is quadratic at worst).
const maxLikeBytes = 1024

// maxSameNodes bounds the operands compared for identity (x = x,
// lower(x) = lower(x)): a larger operand is not compared.
const maxSameNodes = 64

// maxOrOperands bounds the operands of one OR chain searched for a
// complementary pair of null tests (x IS NULL OR x IS NOT NULL).
const maxOrOperands = 256

// allPercent reports whether pattern p, under escape character esc (0
// for none), is one or more '%' only: it matches every string that is
// not NULL.
func allPercent(p string, esc byte) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || (esc != 0 && p[i] == esc) {
			return false
		}
	}
	return true
}

// likeMatch matches s against the LIKE pattern p ('%' any run, '_' one
// character, esc the escape character or 0); fold matches ASCII letters
// case-insensitively. ok is false when the answer is not certain: a
// case-insensitive match over non-ASCII text (it depends on the
// collation), a pattern ending in a lone escape, or a text too long.
func likeMatch(s, p string, esc byte, fold bool) (match, ok bool) {
	if allPercent(p, esc) {
		return true, true
	}
	if len(s) > maxLikeBytes || len(p) > maxLikeBytes || !utf8.ValidString(s) || !utf8.ValidString(p) {
		return false, false
	}
	if fold {
		if !isASCII(s) || !isASCII(p) {
			return false, false
		}
		s, p = strings.ToLower(s), strings.ToLower(p)
	}
	// Tokens of the pattern: a literal rune, '_' (any) or '%' (star).
	type tok struct {
		r    rune
		kind byte // 'l' literal, '_' one, '%' any run
	}
	var toks []tok
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case esc != 0 && p[i] == esc:
			if i+n >= len(p) {
				return false, false
			}
			r2, n2 := utf8.DecodeRuneInString(p[i+n:])
			toks = append(toks, tok{r2, 'l'})
			i += n + n2
			continue
		case r == '%':
			toks = append(toks, tok{kind: '%'})
		case r == '_':
			toks = append(toks, tok{kind: '_'})
		default:
			toks = append(toks, tok{r, 'l'})
		}
		i += n
	}
	rs := []rune(s)
	// The greedy match with one backtracking point per '%': linear in
	// practice, len(rs)*len(toks) at worst.
	si, ti, starT, starS := 0, 0, -1, 0
	for si < len(rs) {
		switch {
		case ti < len(toks) && (toks[ti].kind == '_' || toks[ti].kind == 'l' && toks[ti].r == rs[si]):
			si++
			ti++
		case ti < len(toks) && toks[ti].kind == '%':
			starT, starS = ti, si
			ti++
		case starT >= 0:
			starS++
			si, ti = starS, starT+1
		default:
			return false, true
		}
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks), true
}

// detFunctions are the functions whose value depends on their arguments
// only (in every dialect that has them): two identical calls of one have
// one value. A function not listed (RAND, NOW, UUID, a user's function)
// may differ from one call to the next.
var detFunctions = map[string]bool{
	"abs": true, "ascii": true, "bin": true, "btrim": true, "ceil": true, "ceiling": true, "char": true,
	"char_func": true, "char_length": true, "character_length": true, "chr": true, "coalesce": true,
	"concat": true, "concat_ws": true, "conv": true, "floor": true, "greatest": true, "hex": true, "if": true,
	"ifnull": true, "iif": true, "initcap": true, "instr": true, "lcase": true, "least": true, "left": true,
	"length": true, "locate": true, "lower": true, "lpad": true, "ltrim": true, "md5": true, "mod": true,
	"nullif": true, "oct": true, "octet_length": true, "ord": true, "position": true, "power": true,
	"pow": true, "quote": true, "repeat": true, "replace": true, "reverse": true, "right": true,
	"round": true, "rpad": true, "rtrim": true, "sha1": true, "sha2": true, "sign": true, "sqrt": true,
	"strpos": true, "substr": true, "substring": true, "to_hex": true, "translate": true, "trim": true,
	"typeof": true, "ucase": true, "unhex": true, "unicode": true, "upper": true,
}

// funcDialect is how a dialect's functions treat NULL and characters.
type funcDialect struct {
	// concatSkipsNull: CONCAT ignores NULL arguments (PostgreSQL,
	// SQLite); in MySQL one NULL makes it NULL.
	concatSkipsNull bool
	// charBytes: CHAR(n) is the bytes of n, a binary string (MySQL);
	// otherwise the character of code point n (SQLite's char,
	// PostgreSQL's chr).
	charBytes bool
}

// foldCall folds a call of name over constant arguments (unknown for a
// function it does not know).
func (f folding) foldCall(d funcDialect, name string, args []tv) tv {
	for _, a := range args {
		if a.kind == tvUnknown && name != "coalesce" && name != "ifnull" && name != "if" && name != "iif" {
			return unknown
		}
	}
	switch name {
	case "char", "chr", "char_func":
		return d.char(args)
	case "concat":
		var b strings.Builder
		bin := false
		for _, a := range args {
			switch {
			case a.kind == tvNull && d.concatSkipsNull:
				continue
			case a.kind == tvNull:
				return tv{kind: tvNull}
			case a.kind != tvStr || a.coll:
				return unknown // a number's text depends on its type
			}
			bin = bin || a.bin
			if b.Len()+len(a.str) > maxLikeBytes {
				return unknown
			}
			b.WriteString(a.str)
		}
		return tv{kind: tvStr, str: b.String(), bin: bin && !d.concatSkipsNull}
	case "coalesce", "ifnull":
		if name == "ifnull" && len(args) != 2 {
			return unknown
		}
		for _, a := range args {
			if a.kind != tvNull {
				return a // unknown stays unknown: the first that may be non-NULL decides
			}
		}
		return tv{kind: tvNull}
	case "nullif":
		if len(args) != 2 {
			return unknown
		}
		eq := f.compare("=", args[0], args[1])
		switch {
		case eq.kind == tvUnknown:
			return unknown
		case eq.truth():
			return tv{kind: tvNull}
		}
		return args[0]
	case "lower", "upper", "lcase", "ucase":
		if len(args) != 1 {
			return unknown
		}
		a := args[0]
		switch {
		case a.kind == tvNull:
			return a
		case a.kind != tvStr || !isASCII(a.str):
			return unknown
		case a.bin:
			return a // MySQL: no case in a binary string
		case name == "lower" || name == "lcase":
			a.str = strings.ToLower(a.str)
		default:
			a.str = strings.ToUpper(a.str)
		}
		return a
	case "ascii", "ord", "unicode":
		// The code of the first character, for ASCII text (MySQL's ORD
		// and ASCII read bytes, the others characters: the same there).
		if len(args) != 1 {
			return unknown
		}
		switch a := args[0]; {
		case a.kind == tvNull:
			return a
		case a.kind == tvStr && a.str != "" && a.str[0] < 0x80 && !a.hex:
			return tvNumber(big.NewRat(int64(a.str[0]), 1))
		}
		return unknown
	case "length", "char_length", "character_length", "octet_length":
		// Bytes and characters are one count for ASCII text.
		if len(args) != 1 {
			return unknown
		}
		switch a := args[0]; {
		case a.kind == tvNull:
			return a
		case a.kind == tvStr && isASCII(a.str) && !a.hex:
			return tvNumber(big.NewRat(int64(len(a.str)), 1))
		}
		return unknown
	case "if", "iif":
		if len(args) != 3 {
			return unknown
		}
		c := args[0]
		switch {
		case c.kind == tvNull:
			return args[2]
		case !c.known():
			return unknown
		case c.truth():
			return args[1]
		}
		return args[2]
	}
	return unknown
}

// char folds CHAR(n, ...) / chr(n) over integer arguments.
func (d funcDialect) char(args []tv) tv {
	if len(args) == 0 {
		return unknown
	}
	var b []byte
	for _, a := range args {
		if a.kind == tvNull && d.charBytes {
			continue // MySQL skips NULL
		}
		if a.kind != tvNum || !a.num.IsInt() {
			return unknown
		}
		n := a.num.Num()
		if n.Sign() < 0 || n.BitLen() > 32 {
			return unknown
		}
		v := n.Uint64()
		if d.charBytes {
			var word []byte
			for ; v > 0; v >>= 8 {
				word = append([]byte{byte(v)}, word...)
			}
			if len(word) == 0 {
				word = []byte{0}
			}
			b = append(b, word...)
			continue
		}
		r := rune(v)
		if v == 0 || v > utf8.MaxRune || !utf8.ValidRune(r) {
			return unknown
		}
		b = utf8.AppendRune(b, r)
	}
	return tv{kind: tvStr, str: string(b), bin: d.charBytes}
}

// like folds v LIKE p under the escape character esc (0 for none): a
// pattern of '%' only matches every value that is not NULL (x LIKE '%' is
// true wherever x is, as x = x is); two constant strings are matched, and
// where the dialect may match case-insensitively (f.likeFold, or an
// explicit COLLATE), only an answer both readings give is certain;
// f.likeCI (PostgreSQL's ILIKE) always matches case-insensitively.
func (f folding) like(v, p tv, esc byte) tv {
	switch {
	case v.kind == tvNull || p.kind == tvNull:
		return tv{kind: tvNull}
	case p.kind == tvStr && allPercent(p.str, esc):
		return tvBool(true)
	case v.kind != tvStr || p.kind != tvStr:
		return unknown // a number's text depends on its type
	case (v.bin || p.bin) && (!isASCII(v.str) || !isASCII(p.str)):
		return unknown // '_' is one byte of a binary string, one character of a text
	}
	m, ok := likeMatch(v.str, p.str, esc, f.likeCI && !v.bin && !p.bin)
	if !ok {
		return unknown
	}
	if (f.likeFold && !f.likeCI && !v.bin && !p.bin) || v.coll || p.coll {
		if mf, okf := likeMatch(v.str, p.str, esc, true); !okf || mf != m {
			return unknown
		}
	}
	return tvBool(m)
}

// concat folds x || y (SQLite): NULL if either is, the text of two
// strings joined (a number's text depends on its type: unknown).
func (f folding) concat(x, y tv) tv {
	switch {
	case x.kind == tvNull || y.kind == tvNull:
		if x.kind == tvUnknown || y.kind == tvUnknown {
			return unknown
		}
		return tv{kind: tvNull}
	case x.kind != tvStr || y.kind != tvStr || x.coll || y.coll || len(x.str)+len(y.str) > maxLikeBytes:
		return unknown
	}
	return tvString(x.str + y.str)
}

// complementInChain walks an OR chain of the MySQL or SQLite tree from its
// top node: asOr reads a node as an OR (its two operands; the caller marks
// it seen, so that the chain is walked once), nullTest an operand as a
// null test (its operand's key, whether it tests IS NULL). It reports
// whether, among the chain's first maxOrOperands operands, one operand is
// tested both IS NULL and IS NOT NULL: the chain is true for every row.
func complementInChain[E any](top E, asOr func(E) (l, r E, ok bool), nullTest func(E) (key string, isNull, ok bool)) bool {
	var tests map[string]int // key -> 1 IS NULL, 2 IS NOT NULL
	stack, operands, found := []E{top}, 0, false
	for len(stack) > 0 && operands < maxOrOperands {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if l, r, ok := asOr(e); ok {
			stack = append(stack, r, l)
			continue
		}
		operands++
		if key, isNull, ok := nullTest(e); ok {
			bit := 2
			if isNull {
				bit = 1
			}
			if tests == nil {
				tests = map[string]int{}
			}
			if tests[key] |= bit; tests[key] == 3 {
				found = true
			}
		}
	}
	return found
}

// mentionsNull reports whether s spells NULL in any case: a null test
// does (IS NULL, NOT NULL, ISNULL, NOTNULL), so a condition whose text
// does not holds no pair of them and is not searched for one.
func mentionsNull(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if s[i]|0x20 == 'n' && s[i+1]|0x20 == 'u' && s[i+2]|0x20 == 'l' && s[i+3]|0x20 == 'l' {
			return true
		}
	}
	return false
}
