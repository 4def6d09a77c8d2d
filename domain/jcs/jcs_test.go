package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestRFC8785AppendixBNumbers pins the number serialization table of
// RFC 8785 Appendix B (IEEE 754 bit patterns and their canonical text).
func TestRFC8785AppendixBNumbers(t *testing.T) {
	vectors := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, v := range vectors {
		f := math.Float64frombits(v.bits)
		if got := string(AppendNumber(nil, f)); got != v.want {
			t.Errorf("AppendNumber(%016x) = %s, want %s", v.bits, got, v.want)
		}
		// The same value spelled by Go's formatter must canonicalize alike.
		in := strconv.FormatFloat(f, 'g', -1, 64)
		got, err := Transform([]byte(in))
		if err != nil {
			t.Errorf("Transform(%s): %v", in, err)
			continue
		}
		if string(got) != v.want {
			t.Errorf("Transform(%s) = %s, want %s", in, got, v.want)
		}
	}
}

// TestRFC8785Section3_2_2_3Numbers pins the ECMAScript notation boundaries
// and spellings named in RFC 8785 §3.2.2.3.
func TestRFC8785Section3_2_2_3Numbers(t *testing.T) {
	cases := map[string]string{
		"1e21":                           "1e+21",
		"1E+21":                          "1e+21",
		"999999999999999999999":          "1e+21",
		"100000000000000000000":          "100000000000000000000",
		"1e-7":                           "1e-7",
		"0.0000001":                      "1e-7",
		"0.000001":                       "0.000001",
		"1e-6":                           "0.000001",
		"333333333.33333329":             "333333333.3333333",
		"-0":                             "0",
		"-0.0e5":                         "0",
		"5e-324":                         "5e-324",
		"1.7976931348623157e308":         "1.7976931348623157e+308",
		"4.50":                           "4.5",
		"2e-3":                           "0.002",
		"1E30":                           "1e+30",
		"0.000000000000000000000000001":  "1e-27",
		"1e-400":                         "0", // underflows to zero, a valid double
		"123456789012345678901234567890": "1.2345678901234568e+29",
		"-1.5e-7":                        "-1.5e-7",
		"12.5e1":                         "125",
		"0":                              "0",
		"10":                             "10",
	}
	for in, want := range cases {
		got, err := Transform([]byte(in))
		if err != nil {
			t.Errorf("Transform(%s): %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Transform(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestRFC8785Section3_2_3Sorting pins the member sorting example of
// RFC 8785 §3.2.3: names compare by UTF-16 code units, so U+1F600 (a
// surrogate pair) sorts before U+FB33.
func TestRFC8785Section3_2_3Sorting(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	got, err := Transform([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestRFC8785Section3_2_2Example pins the complete example of RFC 8785
// §3.2.2 (whitespace, literals, numbers and string escapes).
func TestRFC8785Section3_2_2Example(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := Transform([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestRFC8785Section3_2_2_2Strings pins the string escaping rules: only the
// mandatory escapes, \u00xx lowercase for other controls, everything else
// (DEL, U+2028, non-ASCII) written as UTF-8.
func TestRFC8785Section3_2_2_2Strings(t *testing.T) {
	cases := map[string]string{
		`"\u0000\u001F\u007f"`: `"\u0000\u001f` + "\x7f" + `"`,
		`"\b\f\n\r\t"`:         `"\b\f\n\r\t"`,
		`"\/\u002F"`:           `"//"`,
		`"\u2028\u2029"`:       "\"\u2028\u2029\"",
		`"\u00e9é"`:            `"éé"`,
		`"<>&"`:                `"<>&"`,
		`"\uD834\uDD1E"`:       "\"\U0001D11E\"",
		`"a\"b\\c"`:            `"a\"b\\c"`,
		`""`:                   `""`,
		"\"\U0001F600\"":       "\"\U0001F600\"",
		`"\u000b"`:             `"\u000b"`,
	}
	for in, want := range cases {
		got, err := Transform([]byte(in))
		if err != nil {
			t.Errorf("Transform(%s): %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Transform(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestStructureAndWhitespace pins nesting, empty containers and the removal
// of whitespace.
func TestStructureAndWhitespace(t *testing.T) {
	cases := map[string]string{
		" \t\r\n{ } ":                    `{}`,
		"[ ]":                            `[]`,
		`{"b":[1,{"d":1,"c":2}],"a":{}}`: `{"a":{},"b":[1,{"c":2,"d":1}]}`,
		`[ true , false , null ]`:        `[true,false,null]`,
		`{"a":{"b":{"c":{}}},"A":0}`:     `{"A":0,"a":{"b":{"c":{}}}}`,
		`{"aa":1,"a":2,"":3}`:            `{"":3,"a":2,"aa":1}`,
		`{"\u0061b":1,"aa":2}`:           `{"aa":2,"ab":1}`,
		`"top-level string"`:             `"top-level string"`,
	}
	for in, want := range cases {
		got, err := Transform([]byte(in))
		if err != nil {
			t.Errorf("Transform(%s): %v", in, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Transform(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestRejections pins that every kind of invalid input is refused with its
// sentinel error, never repaired.
func TestRejections(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{``, ErrInvalidJSON},
		{`   `, ErrInvalidJSON},
		{`{`, ErrInvalidJSON},
		{`{"a"}`, ErrInvalidJSON},
		{`{"a":1,}`, ErrInvalidJSON},
		{`[1,]`, ErrInvalidJSON},
		{`[1 2]`, ErrInvalidJSON},
		{`{a:1}`, ErrInvalidJSON},
		{`{1:1}`, ErrInvalidJSON},
		{`'a'`, ErrInvalidJSON},
		{`tru`, ErrInvalidJSON},
		{`nul`, ErrInvalidJSON},
		{`"abc`, ErrInvalidJSON},
		{"\"a\nb\"", ErrInvalidJSON},
		{`"\x41"`, ErrInvalidJSON},
		{`"\u12"`, ErrInvalidJSON},
		{`"\u12g4"`, ErrInvalidJSON},
		{`"\`, ErrInvalidJSON},
		{`01`, ErrTrailingData},
		{`+1`, ErrInvalidJSON},
		{`.5`, ErrInvalidJSON},
		{`1.`, ErrInvalidJSON},
		{`1e`, ErrInvalidJSON},
		{`1e+`, ErrInvalidJSON},
		{`-`, ErrInvalidJSON},
		{`0x10`, ErrTrailingData},
		{`1_000`, ErrTrailingData},
		{`1e400`, ErrInvalidNumber},
		{`-1e400`, ErrInvalidNumber},
		{`[1.8e308]`, ErrInvalidNumber},
		{`NaN`, ErrInvalidNumber},
		{`Infinity`, ErrInvalidNumber},
		{`-Infinity`, ErrInvalidNumber},
		{`{"a":1,"a":2}`, ErrDuplicateKey},
		{`{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{`{"x":{"b":1,"c":2,"b":3}}`, ErrDuplicateKey},
		{"\"\xff\"", ErrInvalidUTF8},
		{"\"\xc3\"", ErrInvalidUTF8},
		{"\"\xed\xa0\x80\"", ErrInvalidUTF8}, // UTF-8 encoded surrogate
		{"{\"\xfe\":1}", ErrInvalidUTF8},
		{`"\ud800"`, ErrInvalidUTF8},
		{`"\udc00"`, ErrInvalidUTF8},
		{`"\ud800\u0041"`, ErrInvalidUTF8},
		{`"\ud800x"`, ErrInvalidUTF8},
		{`{} {}`, ErrTrailingData},
		{`1 2`, ErrTrailingData},
		{`null,`, ErrTrailingData},
		{"\x00", ErrInvalidJSON},
		{"\ufeff{}", ErrInvalidJSON}, // a byte order mark is not JSON
	}
	for _, c := range cases {
		got, err := Transform([]byte(c.in))
		if !errors.Is(err, c.want) {
			t.Errorf("Transform(%q) = %q, %v; want error %v", c.in, got, err, c.want)
			continue
		}
		var je *Error
		if !errors.As(err, &je) || je.Offset < 0 || je.Offset > len(c.in) {
			t.Errorf("Transform(%q): error %v is not an *Error with a valid offset", c.in, err)
		}
		if got != nil {
			t.Errorf("Transform(%q) returned output %q with an error", c.in, got)
		}
	}
}

// TestMaxDepth pins the nesting limit on both sides: MaxDepth levels are
// accepted, MaxDepth+1 rejected.
func TestMaxDepth(t *testing.T) {
	for _, open := range []string{"[", `{"k":`} {
		closeCh := "]"
		if open != "[" {
			closeCh = "}"
		}
		at := strings.Repeat(open, MaxDepth) + "0" + strings.Repeat(closeCh, MaxDepth)
		if _, err := Transform([]byte(at)); err != nil {
			t.Errorf("depth %d (%s): %v", MaxDepth, open, err)
		}
		over := strings.Repeat(open, MaxDepth+1) + "0" + strings.Repeat(closeCh, MaxDepth+1)
		if _, err := Transform([]byte(over)); !errors.Is(err, ErrTooDeep) {
			t.Errorf("depth %d (%s): got %v, want ErrTooDeep", MaxDepth+1, open, err)
		}
	}
	// Siblings do not add depth.
	wide := "[" + strings.Repeat(strings.Repeat("[", MaxDepth-1)+strings.Repeat("]", MaxDepth-1)+",", 10) + "0]"
	if _, err := Transform([]byte(wide)); err != nil {
		t.Errorf("wide input rejected: %v", err)
	}
}

// TestAppendTransformKeepsPrefix pins AppendTransform's contract: output is
// appended after dst, and on error dst is returned at its original length.
func TestAppendTransformKeepsPrefix(t *testing.T) {
	dst := []byte("prefix:")
	out, err := AppendTransform(dst, []byte(`{"b":1,"a":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `prefix:{"a":2,"b":1}` {
		t.Fatalf("got %s", out)
	}
	out, err = AppendTransform(out[:7], []byte(`{"b":1,"b":2}`))
	if !errors.Is(err, ErrDuplicateKey) || string(out) != "prefix:" {
		t.Fatalf("got %q, %v", out, err)
	}
}

// TestAppendTransformAllocationFree pins that AppendTransform allocates
// nothing in steady state when dst has room.
func TestAppendTransformAllocationFree(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	in := []byte(benchDoc)
	dst := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(200, func() {
		var err error
		if _, err = AppendTransform(dst[:0], in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendTransform allocates %v times per call, want 0", allocs)
	}
}

// TestIdempotent pins Transform(Transform(x)) == Transform(x) and that the
// canonical form means the same as the input.
func TestIdempotent(t *testing.T) {
	docs := []string{
		benchDoc,
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,1e-27],"s":"\u20ac\u000f\ud83d\ude00"}`,
		`[{"z":null,"y":[true,false,{"\u00f6":-0.0}]},"\t"]`,
	}
	for _, d := range docs {
		once, err := Transform([]byte(d))
		if err != nil {
			t.Fatalf("Transform(%s): %v", d, err)
		}
		twice, err := Transform(once)
		if err != nil {
			t.Fatalf("Transform(%s): %v", once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Errorf("not idempotent:\n%s\n%s", once, twice)
		}
		assertSameMeaning(t, []byte(d), once)
	}
}

// TestNumberRoundTripRandom checks, on random doubles, that the serialization
// parses back to the same double, uses the shortest digits and follows the
// ECMAScript notation boundaries. Reproduce a failure from the printed seed.
func TestNumberRoundTripRandom(t *testing.T) {
	seed := uint64(20250101)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := 0; i < 200000; i++ {
		var f float64
		if i%2 == 0 {
			f = math.Float64frombits(rng.Uint64())
		} else {
			f = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(60)-30))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(AppendNumber(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != f {
			t.Fatalf("seed %d: %v serialized as %s parses back as %v (%v)", seed, f, s, back, err)
		}
		if f != 0 {
			shortest := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
			want := strings.TrimRight(strings.Replace(shortest[:strings.IndexByte(shortest, 'e')], ".", "", 1), "0")
			got, _, _ := strings.Cut(s, "e")
			got = strings.NewReplacer("-", "", ".", "").Replace(got)
			got = strings.TrimRight(strings.TrimLeft(got, "0"), "0")
			if got != want {
				t.Fatalf("seed %d: %v serialized as %s, digits %s, shortest digits are %s", seed, f, s, got, want)
			}
		}
		abs := math.Abs(f)
		exp := strings.Contains(s, "e")
		if f != 0 && (abs >= 1e21 || abs < 1e-6) != exp {
			t.Fatalf("seed %d: %v serialized as %s: wrong notation", seed, f, s)
		}
	}
}

func assertSameMeaning(t *testing.T, a, b []byte) {
	t.Helper()
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if err := da.Decode(&va); err != nil {
		t.Fatalf("decoding %q: %v", a, err)
	}
	if err := db.Decode(&vb); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	if !reflect.DeepEqual(normalize(va), normalize(vb)) {
		t.Fatalf("meaning changed:\n%s\n%s", a, b)
	}
}

// normalize replaces json.Number by its float64 value.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		if f == 0 {
			f = 0 // -0 == 0 in JCS
		}
		return f
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

const benchDoc = `{
  "agent_id": "agent_7f3c",
  "action": {"type": "database_query", "query": "SELECT * FROM orders WHERE id = 42"},
  "context": {"conversation_id": "conv-001", "step_number": 3},
  "cost": 0.0025,
  "tags": ["read", "orders"],
  "approved": true
}`

// BenchmarkTransform measures a ~200-byte request object.
func BenchmarkTransform(b *testing.B) {
	in := []byte(benchDoc)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transform(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTransform measures the allocation-free path on the same
// object.
func BenchmarkAppendTransform(b *testing.B) {
	in := []byte(benchDoc)
	dst := make([]byte, 0, 1024)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AppendTransform(dst[:0], in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRFC8785Section3_2_3SortingMatchesUTF16 checks the member name order
// against a reference: names encoded to UTF-16 and compared unit by unit,
// on random names drawn from the ranges where UTF-8 and UTF-16 order
// disagree. Reproduce a failure from the printed seed.
func TestRFC8785Section3_2_3SortingMatchesUTF16(t *testing.T) {
	seed := uint64(8785)
	rng := rand.New(rand.NewPCG(seed, seed))
	pool := []rune{'a', 'b', 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfb33, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	name := func() string {
		n := rng.IntN(4)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = pool[rng.IntN(len(pool))]
		}
		return string(rs)
	}
	for i := 0; i < 20000; i++ {
		a, b := name(), name()
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		got := compareUTF16([]byte(a), []byte(b))
		if (got < 0) != (want < 0) || (got == 0) != (want == 0) {
			t.Fatalf("seed %d: compareUTF16(%+q, %+q) = %d, reference %d", seed, a, b, got, want)
		}
	}
}
