package code

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/engines/enginetest"
)

// nonASCIIContexts are, per language, source texts with a hole "\x00"
// where the code point goes: the lexer's and the external scanner's
// decision points (braces, expansions, quotes, heredocs, comments,
// numbers, identifiers, regular expressions, template strings, indents).
var nonASCIIContexts = map[string][]string{
	langBash: {
		"\x00", "{\x00", "{0\x00", "A({0\x000!}$", "{1..\x00", "{1..2\x00}", "echo {a,\x00}", "${\x00}", "$\x00",
		"${x:-\x00}", "${x/\x00/y}", "${#\x00}", "echo \x00", "\x00=1", "a[\x00]=1", "'\x00'", "\"\x00\"", "`\x00`",
		"$'\x00'", "#\x00", "\\\x00", "<<\x00\nx\n\x00\n", "cat <<'\x00'\nx\n\x00\n", "cat <<EOF\n\x00\nEOF\n",
		"case \x00 in \x00) ;; esac", "[[ \x00 =~ \x00 ]]", "$((\x00))", "f() { \x00; }", "printf %s \x00 >&\x00",
		"ls @(\x00|x)", "echo $(\x00)", "x=(\x00)", "echo >\x00", "rm -rf /\x00",
	},
	langPython: {
		"\x00", "x = \x00", "\x00 = 1", "'\x00'", "\"\"\"\x00\"\"\"", "f'{\x00}'", "f'\x00{x}'", "b'\x00'", "r'\x00'",
		"#\x00", "0x\x00", "1e\x00", "1_\x00", "\\\x00", "def \x00(): pass", "if x:\n\x00  y\n", "if x:\n  y\n\x00",
		"  \x00", "x.\x00", "@\x00\ndef f(): pass", "print(\x00)", "exec('\x00')", "import \x00", "lambda \x00: 1",
	},
	langJavaScript: {
		"\x00", "x = \x00", "'\x00'", "`${\x00}`", "`\x00`", "/\x00/", "x = y /\x00/ z", "//\x00", "/*\x00",
		"0x\x00", "1\x00", "\\u\x00", "<div>\x00</div>", "let \x00 = 1", "x?.\x00", "#\x00", "class A { #\x00 }",
		"a\n\x00b", "@\x00", "eval('\x00')", "require('\x00')",
	},
}

// TestNonASCII_EveryGrammar runs every sampled code point through every
// context of every grammar, raw and doubled: no crash (the bash
// grammar's scanner read out of bounds on U+10FFFD after "{0" and killed
// the process), no engine failure, findings inside the source.
func TestNonASCII_EveryGrammar(t *testing.T) {
	sample := enginetest.NonASCII()
	for _, lang := range Languages() {
		t.Run(lang, func(t *testing.T) {
			for _, ctx := range nonASCIIContexts[lang] {
				for _, r := range sample {
					s := string(r)
					checkOutcome(t, lang, strings.ReplaceAll(ctx, "\x00", s))
					checkOutcome(t, lang, strings.ReplaceAll(ctx, "\x00", s+s))
				}
			}
		})
	}
}

// TestNonASCII_TheReportedCrash is the request, as the code engine
// sees it: analysed (the unclosed "(" is a syntax error), not a crash.
func TestNonASCII_TheReportedCrash(t *testing.T) {
	out := checkOutcome(t, langBash, "A({0\U0010FFFD0!}$")
	if out.Err == nil || out.Err.Code != "QWED-REQ-003" {
		t.Fatalf("outcome %+v, want the syntax error QWED-REQ-003", out)
	}
}

// TestNarrow_SameTreeAsTheSource pins that the bash grammar reads the
// narrowed text as it reads the source: for every context and sampled
// code point where the unnarrowed parse is safe (no code point above
// U+00FF right after "{" and digits, where its scanner reads out of
// bounds), the copied trees are equal node for node, offsets included,
// and so is the outcome of the parse.
func TestNarrow_SameTreeAsTheSource(t *testing.T) {
	narrowed := grammarFor(langBash)
	plain := *narrowed
	plain.narrow = false
	compared := 0
	for _, ctx := range append(nonASCIIContexts[langBash],
		"echo \x00 | grep \x00", "x=\x00; $x \x00", "echo \x00\x00 \x00\n# \x00\nls \x00",
		"cat <<\x00\n\x00\n\x00\n", "cat <<EOF\n\x00\nEOF\necho \x00") {
		for i, r := range enginetest.NonASCII() {
			if i%3 != 0 {
				continue // a third of the sample: the sweep above has the rest
			}
			for _, src := range []string{strings.ReplaceAll(ctx, "\x00", string(r)), strings.ReplaceAll(ctx, "\x00", "é"+string(r)+"x")} {
				if braceThenWide(src) || heredocOfWide(src) {
					continue
				}
				want, werr := parse(&plain, src)
				got, gerr := parse(narrowed, src)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Fatalf("%q: error %v, want %v", src, gerr, werr)
				}
				if werr == nil && dumpTree(got) != dumpTree(want) {
					t.Fatalf("%q: tree\n%s\nwant\n%s", src, dumpTree(got), dumpTree(want))
				}
				compared++
			}
		}
	}
	if compared < 2000 {
		t.Fatalf("only %d sources compared", compared)
	}
}

// braceThenWide reports whether a code point above U+00FF follows "{"
// and digits (and ".." and digits): where the unnarrowed scanner's
// isdigit reads out of bounds.
func braceThenWide(src string) bool {
	for i := 0; i < len(src); i++ {
		if src[i] != '{' {
			continue
		}
		j := i + 1
		digits := func() {
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
		}
		digits()
		if strings.HasPrefix(src[j:], "..") {
			j += 2
			digits()
		}
		if r, _ := utf8.DecodeRuneInString(src[j:]); r > 0xFF {
			return true
		}
	}
	return false
}

// heredocOfWide reports whether a heredoc delimiter holds a code point
// above U+00FF: the one place the stand-in reads differently (narrow.go).
func heredocOfWide(src string) bool {
	for rest := src; ; {
		i := strings.Index(rest, "<<")
		if i < 0 {
			return false
		}
		rest = rest[i+2:]
		word := strings.TrimLeft(rest, " '\"")
		if end := strings.IndexAny(word, " '\"\n"); end >= 0 {
			word = word[:end]
		}
		for _, r := range word {
			if r > 0xFF {
				return true
			}
		}
	}
}

// dumpTree renders a copied tree: kind, field, offsets, flags, per node.
func dumpTree(p *parsed) string {
	var b strings.Builder
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		fmt.Fprintf(&b, "%*s%s %s [%d,%d) %d:%d %v %v\n", depth, "", n.kind, n.field, n.start, n.end, n.row, n.col, n.named, n.missing)
		for _, c := range n.children {
			walk(c, depth+1)
		}
	}
	walk(p.root, 0)
	return b.String()
}

// TestNarrow_Offsets pins the narrowing of each UTF-8 length and the map
// back, on both sides of every replaced code point.
func TestNarrow_Offsets(t *testing.T) {
	src := "aé\u0100b\u0800c\U00010000d\xffe"
	text, back := narrow(src)
	if want := "aé\u0080b\u0080c\u0080d\xffe"; string(text) != want {
		t.Fatalf("narrowed %q, want %q", text, want)
	}
	// Each character of the narrowed text starts where its source
	// character starts.
	var starts, wantStarts []int
	for i := range string(text[:len(text)-2]) { // the invalid byte and "e" are checked below
		starts = append(starts, back.source(i))
	}
	for i := range src[:len(src)-2] {
		wantStarts = append(wantStarts, i)
	}
	if fmt.Sprint(starts) != fmt.Sprint(wantStarts) {
		t.Fatalf("starts %v, want %v", starts, wantStarts)
	}
	if got := back.source(len(text)); got != len(src) {
		t.Fatalf("end maps to %d, want %d", got, len(src))
	}
	if text, back := narrow("plain é ascii"); string(text) != "plain é ascii" || back != nil {
		t.Fatalf("narrowed a text with nothing above U+00FF: %q %v", text, back)
	}
	if text, back := narrow("\u0100\u07ff"); string(text) != "\u0080\u0080" || back != nil {
		t.Fatalf("two-byte code points: %q %v, want no offset map", text, back)
	}
}

// TestNarrow_WideHeredocDelimiter pins the one place the stand-in reads
// differently (narrow.go): a heredoc delimiter with a code point above
// U+00FF ends at no line, as one in U+0080..U+00FF never did, so the
// script is a syntax error (never VERIFIED); it used to end at the line
// "6" (U+0436 truncated to a C char).
func TestNarrow_WideHeredocDelimiter(t *testing.T) {
	for _, src := range []string{"cat <<ж\nrm -rf /\nж\n", "cat <<é\nrm -rf /\né\n", "cat <<ж\nx\n6\nrm -rf /\n"} {
		out := checkOutcome(t, langBash, src)
		if out.Err == nil || out.Err.Code != "QWED-REQ-003" || out.Err.Details["expected"] != "heredoc_end" {
			t.Fatalf("%q: %s %+v, want the syntax error QWED-REQ-003 (expected heredoc_end)", src, out.Status, out.Err)
		}
	}
}
