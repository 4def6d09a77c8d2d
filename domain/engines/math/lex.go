package math

import (
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokPlus
	tokMinus
	tokStar
	tokSlash
	tokPow // ^ or **
	tokLParen
	tokRParen
	tokComma
	tokEq // = or ==
	tokNe // !=
	tokLt
	tokLe
	tokGt
	tokGe
)

// token is one lexeme; pos is its byte offset in the query.
type token struct {
	kind tokKind
	text string
	pos  int
}

// describe names a token the way a syntax error reports it as "found".
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return "'" + t.text + "'"
}

// lex splits q into tokens. Whitespace separates tokens; the Unicode
// operators × ÷ − are read as * / -. A number is digits with an optional
// fraction and an optional exponent (1.5e3): the exponent is read only when
// e/E is followed by a digit or by a sign and a digit.
func lex(q string) []token {
	var toks []token
	i := 0
	for i < len(q) {
		c := q[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if len(toks) >= MaxTokens {
			fail(limitProblem("max_tokens", MaxTokens, i))
		}
		start := i
		switch {
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			i = lexNumber(q, i)
			if i-start > MaxLiteralDigits {
				fail(limitProblem("max_literal_digits", MaxLiteralDigits, start))
			}
			toks = append(toks, token{tokNum, q[start:i], start})
			continue
		case isIdentStart(c):
			for i < len(q) && isIdentPart(q[i]) {
				i++
			}
			toks = append(toks, token{tokIdent, q[start:i], start})
			continue
		}
		kind, n := tokEOF, 1
		switch c {
		case '+':
			kind = tokPlus
		case '-':
			kind = tokMinus
		case '*':
			kind = tokStar
			if strings.HasPrefix(q[i:], "**") {
				kind, n = tokPow, 2
			}
		case '/':
			kind = tokSlash
		case '^':
			kind = tokPow
		case '(':
			kind = tokLParen
		case ')':
			kind = tokRParen
		case ',':
			kind = tokComma
		case '=':
			kind = tokEq
			if strings.HasPrefix(q[i:], "==") {
				n = 2
			}
		case '!':
			if strings.HasPrefix(q[i:], "!=") {
				kind, n = tokNe, 2
			}
		case '<':
			kind = tokLt
			if strings.HasPrefix(q[i:], "<=") {
				kind, n = tokLe, 2
			}
		case '>':
			kind = tokGt
			if strings.HasPrefix(q[i:], ">=") {
				kind, n = tokGe, 2
			}
		default:
			r, size := utf8.DecodeRuneInString(q[i:])
			switch r {
			case '×', '·':
				kind, n = tokStar, size
			case '÷':
				kind, n = tokSlash, size
			case '−':
				kind, n = tokMinus, size
			case '≠':
				kind, n = tokNe, size
			case '≤':
				kind, n = tokLe, size
			case '≥':
				kind, n = tokGe, size
			}
			if kind == tokEOF {
				found := "'" + string(r) + "'"
				if r == utf8.RuneError && size <= 1 {
					found = "invalid UTF-8"
				}
				fail(syntaxProblem(i, "an expression", found, "unexpected character"))
			}
		}
		if kind == tokEOF {
			fail(syntaxProblem(i, "an expression", "'"+string(c)+"'", "unexpected character"))
		}
		toks = append(toks, token{kind, q[i : i+n], i})
		i += n
	}
	return append(toks, token{tokEOF, "", len(q)})
}

// lexNumber returns the end of the number literal starting at i.
func lexNumber(q string, i int) int {
	for i < len(q) && isDigit(q[i]) {
		i++
	}
	if i < len(q) && q[i] == '.' {
		i++
		for i < len(q) && isDigit(q[i]) {
			i++
		}
	}
	if i < len(q) && (q[i] == 'e' || q[i] == 'E') {
		j := i + 1
		if j < len(q) && (q[j] == '+' || q[j] == '-') {
			j++
		}
		if j < len(q) && isDigit(q[j]) {
			for j < len(q) && isDigit(q[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }
