package jcs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// generalNumber is the general number path: parse as a double, write it as
// ECMAScript does (RFC 8785 §3.2.2.3).
func generalNumber(t *testing.T, tok string) string {
	t.Helper()
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		t.Fatalf("ParseFloat(%q): %v", tok, err)
	}
	return string(AppendNumber(nil, f))
}

// TestIntegerFastPathMatchesParseFloat pins the integer fast path of number
// (a token of at most 15 digits, no fraction, no exponent, copied as is)
// against the general ParseFloat + AppendNumber path, on the edges (0, -0,
// 15 and 16 digits, 2^53 and its neighbours) and on random integers of 1 to
// 22 digits with and without a sign. Reproduce a failure from the seed.
func TestIntegerFastPathMatchesParseFloat(t *testing.T) {
	toks := []string{"0", "-0", "1", "-1", "9", "10", "-10", "999999999999999", "-999999999999999",
		"1000000000000000", "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
		"99999999999999999999", "100000000000000000000", "1000000000000000000000", "123456789012345678901234567890"}
	seed := uint64(2026)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		n := 1 + rng.IntN(22)
		b.WriteByte(byte('1' + rng.IntN(9)))
		for j := 1; j < n; j++ {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		toks = append(toks, b.String())
	}
	for _, tok := range toks {
		want := generalNumber(t, tok)
		for _, doc := range []string{tok, "[" + tok + "]", `{"k":` + tok + "}", " " + tok + " "} {
			got, err := Transform([]byte(doc))
			if err != nil {
				t.Fatalf("seed %d: Transform(%q): %v", seed, doc, err)
			}
			wantDoc := strings.Replace(strings.TrimSpace(doc), tok, want, 1)
			if string(got) != wantDoc {
				t.Fatalf("seed %d: Transform(%q) = %s, general path %s", seed, doc, got, wantDoc)
			}
		}
	}
	// Numbers the fast path must leave to the general path.
	for tok, want := range map[string]string{"1.0": "1", "-0.0": "0", "1e2": "100", "1E21": "1e+21",
		"10000000000000001": "10000000000000000", "0.000001": "0.000001", "1e-7": "1e-7"} {
		if got, err := Transform([]byte(tok)); err != nil || string(got) != want {
			t.Errorf("Transform(%s) = %s, %v; want %s", tok, got, err, want)
		}
	}
}

// TestAppendTransformNestedMatchesEmbedding pins AppendTransformNested: the
// canonical form of a value written inside outer containers by the caller
// equals the canonical form of the whole document, and the value is
// rejected with ErrTooDeep exactly when the document is.
func TestAppendTransformNestedMatchesEmbedding(t *testing.T) {
	values := []string{
		`{"b":1,"a":[1.0,1e21,-0,"\u00e9\ud83d\ude00"]}`, ` [ ] `, `"x"`, `null`, `{"z":{"y":{"x":1}}}`,
		strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2),
		strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1),
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	}
	for _, v := range values {
		for outer := 0; outer <= 3; outer++ {
			doc := strings.Repeat(`{"k":`, outer) + v + strings.Repeat("}", outer)
			whole, werr := Transform([]byte(doc))
			prefix := []byte("p")
			part, perr := AppendTransformNested(prefix, []byte(v), outer)
			if (werr == nil) != (perr == nil) {
				t.Fatalf("outer %d, %.40q: document error %v, nested error %v", outer, v, werr, perr)
			}
			if werr != nil {
				if !errors.Is(werr, ErrTooDeep) || !errors.Is(perr, ErrTooDeep) || string(part) != "p" {
					t.Fatalf("outer %d: %v / %v / %q", outer, werr, perr, part)
				}
				continue
			}
			rebuilt := strings.Repeat(`{"k":`, outer) + string(part[1:]) + strings.Repeat("}", outer)
			if !bytes.Equal(whole, []byte(rebuilt)) || part[0] != 'p' {
				t.Fatalf("outer %d: document %s, nested %s", outer, whole, rebuilt)
			}
		}
	}
	if _, err := AppendTransformNested(nil, []byte("[]"), -5); err != nil {
		t.Fatalf("negative outer: %v", err)
	}
}

// general returns Transform's result with the fast paths off: the
// reference the fast paths must match byte for byte, error for error.
func general(raw []byte) ([]byte, error) {
	fastPaths = false
	defer func() { fastPaths = true }()
	return Transform(raw)
}

// TestDecimalFastPathMatchesParseFloat pins appendShortDecimal (a number
// with a fraction, no exponent, at most 15 significant digits, at least
// 1e-6) against the general ParseFloat + AppendNumber path: on the edges of
// its bounds (15 and 16 digits, 1e-6 and below, zeros of both signs,
// trailing zeros) and on random decimals of 1 to 22 integer and fraction
// digits, zeros favoured. Reproduce a failure from the seed.
func TestDecimalFastPathMatchesParseFloat(t *testing.T) {
	toks := []string{"0.0", "-0.0", "0.000", "-0.00", "12.50", "687.50", "1.0", "10.10", "100.000",
		"0.000001", "0.0000010", "0.0000001", "-0.000001", "0.00000123456789012345",
		"123456789012345.0", "123456789012345.6", "12345678901234.5", "1234567890123456.0",
		"0.123456789012345", "0.1234567890123456", "0.000012345678901234", "0.0000123456789012345",
		"999999999999999.9", "99999999999999.99", "9007199254740993.0", "0.30000000000000004",
		"1000000000000000000000.5", "100000000000000000000.0", "5e-324", "1.5e3"}
	seed := uint64(13)
	rng := rand.New(rand.NewPCG(seed, 2))
	digit := func(b *strings.Builder) {
		if rng.IntN(3) == 0 {
			b.WriteByte('0')
		} else {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	for i := 0; i < 50000; i++ {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		if n := rng.IntN(23); n == 0 {
			b.WriteByte('0')
		} else {
			b.WriteByte(byte('1' + rng.IntN(9)))
			for j := 1; j < n; j++ {
				digit(&b)
			}
		}
		b.WriteByte('.')
		for j := 1 + rng.IntN(22); j > 0; j-- {
			digit(&b)
		}
		toks = append(toks, b.String())
	}
	for _, tok := range toks {
		want := generalNumber(t, tok)
		for _, doc := range []string{tok, "[" + tok + "," + tok + "]", `{"k":` + tok + "}"} {
			got, err := Transform([]byte(doc))
			if err != nil {
				t.Fatalf("seed %d: Transform(%q): %v", seed, doc, err)
			}
			wantDoc := strings.ReplaceAll(doc, tok, want)
			if string(got) != wantDoc {
				t.Fatalf("seed %d: Transform(%q) = %s, general path %s", seed, doc, got, wantDoc)
			}
		}
	}
}

// TestSmallObjectSortMatchesGeneral pins the shortcuts of member sorting
// (an object already in order written as is, an insertion sort up to 12
// members) against the general sort, on objects of 0 to 16 members whose
// names are drawn from a small set (so duplicates occur) that sorts
// differently by UTF-16 and by UTF-8, in random order. Reproduce a failure
// from the seed.
func TestSmallObjectSortMatchesGeneral(t *testing.T) {
	names := []string{"a", "b", "ab", "", "\u20ac", "\ufb33", "\U0001F600", "\\u0041", "A", "\u00e9", "z", "aa", "\u0080", "\\n", "10", "9", "\ufffd", "x", "y", "c"}
	seed := uint64(8785)
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < 20000; i++ {
		n := rng.IntN(17)
		var b strings.Builder
		b.WriteByte('{')
		for j := 0; j < n; j++ {
			if j > 0 {
				b.WriteString(" ,")
			}
			fmt.Fprintf(&b, `"%s": {"v":%d,"w":[%d.50]}`, names[rng.IntN(len(names))], j, j)
		}
		b.WriteByte('}')
		doc := []byte(b.String())
		got, gerr := Transform(doc)
		want, werr := general(doc)
		if !bytes.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("seed %d: Transform(%s) = %s, %v; general path %s, %v", seed, doc, got, gerr, want, werr)
		}
	}
}
