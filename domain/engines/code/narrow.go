package code

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// The bash grammar's external scanner (tree-sitter-bash v0.25.1,
// scan_brace_start) classifies the character after a "{" with C's isdigit,
// whose table covers only -1..255: a code point above U+00FF reads out of
// bounds, and one far above (U+10FFFD in "A({0\U0010FFFD0!}$") kills the
// process. The grammar otherwise reads every code point from '~' up as one
// class: its lexer's character sets all end in the range '~'..U+10FFFF, and
// the scanner's iswalpha, iswalnum and iswspace are false for every
// non-ASCII code point in the C locale the gate runs in. So the parser is
// given, for each code point above U+00FF, the stand-in U+0080 of that
// class, which isdigit reads inside its table; the tree is the same tree,
// and its byte offsets are mapped back to the source (offsetMap), so the
// analysers read the real text at the real positions.
//
// A byte order mark at offset 0 is kept: tree-sitter's lexer skips it
// before any scanner runs.
//
// The one thing the stand-in changes is a heredoc delimiter made of such
// code points: the scanner stores delimiter characters as C chars, so
// "<<ж" used to end at a line "6" (U+0436 truncated to 0x36); with the
// stand-in it ends at no line, as a delimiter in U+0080..U+00FF always
// did, and the unterminated heredoc is refused as a syntax error.

// standIn is the code point the bash grammar reads in place of every code
// point above U+00FF (two bytes in UTF-8).
const standIn = '\u0080'

// offsetMap maps byte offsets in a narrowed text back to the source: from
// parsed offset at[i] on, the source is by[i] bytes further (both
// increasing). The nil map is the identity.
type offsetMap struct {
	at []int
	by []int
}

// source returns the source offset of the narrowed offset off, which is
// on a character boundary.
func (m *offsetMap) source(off int) int {
	if m == nil {
		return off
	}
	i := sort.SearchInts(m.at, off+1) // the first at[i] > off
	if i == 0 {
		return off
	}
	return off + m.by[i-1]
}

// narrow returns src with every code point above U+00FF replaced by
// standIn, and the map of the narrowed offsets back to src (nil when
// every replaced code point was two bytes long, so offsets are equal).
// A src with no such code point is returned as is, without copying more
// than []byte(src) does. Bytes that are not valid UTF-8 are kept: the
// parser reads them as decoding errors, as before.
func narrow(src string) ([]byte, *offsetMap) {
	first, from := -1, 0
	if strings.HasPrefix(src, "\uFEFF") {
		from = len("\uFEFF")
	}
	for i := from; i < len(src); i++ {
		if src[i] >= 0xC4 { // the lead bytes of U+0100 and above
			first = i
			break
		}
	}
	if first < 0 {
		return []byte(src), nil
	}
	out := make([]byte, first, len(src))
	copy(out, src[:first])
	var m *offsetMap
	shift := 0
	for i := first; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		if r <= 0xFF || size == 1 {
			out = append(out, src[i:i+size]...)
			i += size
			continue
		}
		out = utf8.AppendRune(out, standIn)
		i += size
		if size > 2 {
			if m == nil {
				m = &offsetMap{}
			}
			shift += size - 2
			m.at = append(m.at, len(out))
			m.by = append(m.by, shift)
		}
	}
	return out, m
}
