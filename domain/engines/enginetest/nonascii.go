package enginetest

import "unicode/utf8"

// NonASCII is a fixed sample of code points above U+007F for the parsers'
// tests: every third one up to U+017F (across the 0xFF/0x100 edge of C's
// ctype tables, both of which are listed), a stride through the rest of
// the basic plane and the supplementary planes, and the code points a
// lexer may single out (white space and line separators, digits of other
// scripts, the byte order mark, the last code points of each UTF-8
// length). About 370 code points, the same on every run.
func NonASCII() []rune {
	var out []rune
	for r := rune(0x80); r <= 0x17F; r += 3 {
		out = append(out, r)
	}
	for r := rune(0x180); r <= 0xFFFF; r += 251 {
		if !utf8.ValidRune(r) { // surrogates
			continue
		}
		out = append(out, r)
	}
	for r := rune(0x10000); r <= 0x10FFFF; r += 65521 {
		out = append(out, r)
	}
	return append(out, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFD, 0x10FFFF, 0xFFFD, 0xFEFF, 0x2028, 0x2029,
		0x3000, 0x1680, 0x200B, 0x0661, 0xFF10, 0x1D7CE, 0x1F600, 0x0436, 0xFF, 0x100)
}
