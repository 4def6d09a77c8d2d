package eventjson_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// A filler sets every field of a domain.Event by reflection, from a
// stream of choices: a seeded generator for the random tests, the fuzz
// input for the fuzz test. Because it walks the types, a field added to
// any type of the event is filled too, and the comparison with
// json.Marshal fails until the encoder writes it.
type filler struct {
	// draw returns a choice of n bytes' worth (1 to 8).
	draw func(n int) uint64
	// full sets everything: pointers, slices and maps non-empty, scalars
	// non-zero, and only values the fast path encodes (valid numbers,
	// raw messages and times; supported detail types).
	full bool
}

// newRandFiller returns a filler drawing from a seeded generator.
func newRandFiller(seed uint64, full bool) *filler {
	r := rand.New(rand.NewPCG(seed, 0xe1c0de))
	return &filler{draw: func(int) uint64 { return r.Uint64() }, full: full}
}

// newBytesFiller returns a filler drawing from p: one byte for a small
// choice, eight for an arbitrary number; past p's end every choice is 0
// (so the event is finite: pointers nil, slices empty).
func newBytesFiller(p []byte) *filler {
	return &filler{draw: func(n int) uint64 {
		var b [8]byte
		k := copy(b[:n], p)
		p = p[k:]
		return binary.LittleEndian.Uint64(b[:])
	}}
}

// next is an arbitrary 64-bit choice.
func (f *filler) next() uint64 { return f.draw(8) }

// intn is a choice among n.
func (f *filler) intn(n int) int {
	w := 1
	for ; w < 8 && n > 1<<(8*w); w++ {
	}
	return int(f.draw(w) % uint64(n))
}

// coin is true one time in n.
func (f *filler) coin(n int) bool { return f.intn(n) == 0 }

// wild is true, when not full, for one choice in 40: take a value the
// encoder refuses (which encoding/json encodes or refuses). Rare enough
// that most random events are left with none.
func (f *filler) wild() bool { return !f.full && f.coin(40) }

var (
	timeType   = reflect.TypeFor[time.Time]()
	numberType = reflect.TypeFor[json.Number]()
	rawType    = reflect.TypeFor[json.RawMessage]()
	detailType = reflect.TypeFor[domain.Details]()
)

// event returns a filled event.
func (f *filler) event() *domain.Event {
	ev := new(domain.Event)
	f.fill(reflect.ValueOf(ev).Elem(), 0)
	return ev
}

// fill sets v (settable) by its type.
func (f *filler) fill(v reflect.Value, depth int) {
	switch t := v.Type(); {
	case t == timeType:
		v.Set(reflect.ValueOf(f.time()))
	case t == numberType:
		v.SetString(f.number())
	case t == rawType:
		v.SetBytes(f.raw())
	case t == detailType:
		v.Set(reflect.ValueOf(f.details(depth)))
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f.fill(v.Field(i), depth)
		}
	case t.Kind() == reflect.Pointer:
		if f.full || !f.coin(3) {
			p := reflect.New(t.Elem())
			f.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case t.Kind() == reflect.Slice:
		n := f.intn(3)
		if f.full {
			n++
		}
		if n == 0 && f.coin(2) {
			return // nil, not empty
		}
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case t.Kind() == reflect.String:
		v.SetString(f.string())
	case t.Kind() == reflect.Bool:
		v.SetBool(f.full || f.coin(2))
	case v.CanInt():
		v.SetInt(f.int(t.Bits()))
	case v.CanUint():
		v.SetUint(f.uint(t.Bits()))
	default:
		panic("filler: no rule for " + t.String())
	}
}

// stringPieces are the escape classes of encoding/json's strings, and
// plain text.
var stringPieces = []string{
	"a", "agent_0123", "SELECT * FROM t WHERE a < 1 AND b > 2 && c", "<script>", "&amp;",
	"\u2028", "\u2029", "x\u2028y\u2029z", "\x00", "\x01\x1f", "\x7f", `"`, `\`, `\"`, "\n", "\t", "\r",
	"\b", "\f", "é", "日本語", "🎉", "\xff", "\xfe\xff", "\xe2\x80", "\xe2\x80\xa8\xe2", "\xed\xa0\x80",
	"\xc0\xaf", "\xf4\x90\x80\x80", "\ufffd", " ", "/", "'", "\u00b5s",
}

// string returns text built of pieces and arbitrary bytes; never "" when full.
func (f *filler) string() string {
	n := f.intn(4)
	if f.full {
		n++
	}
	var b []byte
	for range n {
		if f.coin(3) {
			for range f.intn(8) + 1 {
				b = append(b, byte(f.next()))
			}
			continue
		}
		b = append(b, stringPieces[f.intn(len(stringPieces))]...)
	}
	return string(b)
}

// int returns an integer of the given width: small, negative, extreme.
func (f *filler) int(bits int) int64 {
	var x int64
	switch f.intn(6) {
	case 0:
		x = int64(f.intn(3)) - 1
	case 1:
		x = math.MaxInt64
	case 2:
		x = math.MinInt64
	case 3:
		x = int64(f.intn(2_000_000)) - 1_000_000
	default:
		x = int64(f.next())
	}
	x = x << (64 - bits) >> (64 - bits)
	if x == 0 && f.full {
		x = 7
	}
	return x
}

// uint returns an unsigned integer of the given width.
func (f *filler) uint(bits int) uint64 {
	var x uint64
	switch f.intn(3) {
	case 0:
		x = uint64(f.intn(3))
	case 1:
		x = math.MaxUint64
	default:
		x = f.next()
	}
	x = x << (64 - bits) >> (64 - bits)
	if x == 0 && f.full {
		x = 7
	}
	return x
}

// zones are time zones with offsets RFC 3339 writes, a zero offset that
// is not UTC, offsets with seconds; the last two are refused by
// time.Time.MarshalJSON.
var zones = []*time.Location{
	time.UTC, time.FixedZone("zero", 0), time.FixedZone("IST", 5*3600+1800), time.FixedZone("PST", -8*3600),
	time.FixedZone("max", 23*3600+59*60), time.FixedZone("secs", 3600+30), time.FixedZone("small", -30),
	time.FixedZone("day", 24*3600), time.FixedZone("days", -100*3600),
}

// time returns a time of the years 0-9999 (sometimes beyond when not
// full) with or without nanoseconds, in one of zones.
func (f *filler) time() time.Time {
	if !f.full && f.coin(8) {
		return time.Time{}
	}
	const lo, hi = -62167219200, 253402300799 // 0000-01-01, 9999-12-31T23:59:59 UTC
	sec := lo + int64(f.next()%uint64(hi-lo+1))
	var nsec int64
	switch f.intn(4) {
	case 0:
	case 1:
		nsec = int64(f.intn(1000)) * 1_000_000
	default:
		nsec = int64(f.intn(1_000_000_000))
	}
	if f.wild() {
		// Any year, or an offset of a day or more: refused.
		if f.coin(2) {
			return time.Unix(int64(f.next()), nsec).In(zones[f.intn(len(zones))])
		}
		return time.Unix(sec, nsec).In(zones[len(zones)-1-f.intn(2)])
	}
	t := time.Unix(sec, nsec).In(zones[f.intn(len(zones)-2)])
	if t.Year() < 0 || t.Year() > 9999 {
		t = time.Unix(sec, nsec).UTC()
	}
	return t
}

var (
	validNumbers   = []string{"0", "-0", "1", "-1", "12.5", "1e3", "1E+3", "-2.5e-10", "123456789012345678901234567890", "0.000001"}
	invalidNumbers = []string{"01", "1.", ".5", "+1", "1e", "- 1", "abc", " 1", "1 ", "NaN", "0x10", "\u2028"}
)

// number returns a json.Number: valid, "" or invalid (not when full).
func (f *filler) number() string {
	switch {
	case !f.full && f.coin(5):
		return ""
	case f.wild():
		return invalidNumbers[f.intn(len(invalidNumbers))]
	}
	return validNumbers[f.intn(len(validNumbers))]
}

var (
	validRaw = []string{
		`{"to":"x"}`, ` { "a" : [ 1 , 2.5e3 , "<&>" ] , "b" : null } `, "\t[\n\r]", `"\u2028 \"<\\"`,
		"\"a\u2028b\u2029c\"", `null`, `true`, `-0.5`, `{}`, `[{"x":{"y":[]}}]`, `"\ud800"`,
		"\"\xff\"", "\"é\"", `{"a":"b","a":"c"}`,
	}
	invalidRaw = []string{`{`, `{"a":}`, `nul`, `[1,]`, `"\x"`, "\"\x01\"", `1 2`, ` `, `{"a" 1}`, "\"\xe2\x80\xa8"}
)

// raw returns a json.RawMessage: valid JSON with spaces and characters to
// escape, nil, empty, or invalid JSON and arbitrary bytes (not when full).
func (f *filler) raw() json.RawMessage {
	switch {
	case !f.full && f.coin(5):
		return nil
	case !f.full && f.coin(8):
		return json.RawMessage{}
	case f.wild():
		if f.coin(2) {
			return json.RawMessage(f.string())
		}
		return json.RawMessage(invalidRaw[f.intn(len(invalidRaw))])
	}
	return json.RawMessage(validRaw[f.intn(len(validRaw))])
}

// details returns error details: nil, empty, or keys with values of every
// kind the gate records (and, when not full, kinds the fast path leaves
// to encoding/json).
func (f *filler) details(depth int) domain.Details {
	if !f.full && f.coin(4) {
		if f.coin(2) {
			return nil
		}
		return domain.Details{}
	}
	n := f.intn(4) + 1
	m := make(domain.Details, n)
	for range n {
		m[f.string()] = f.anyValue(depth + 1)
	}
	return m
}

// anyValue returns a dynamic value of error details.
func (f *filler) anyValue(depth int) any {
	kinds := 20
	if depth > 4 {
		kinds = 10 // no more nesting
	}
	k := f.intn(kinds)
	if f.wild() {
		k = 20 + f.intn(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return f.string()
	case 2:
		return f.coin(2)
	case 3:
		return int(f.int(64))
	case 4:
		return f.int(64)
	case 5:
		return domain.USD(f.int(64))
	case 6:
		return json.Number(f.number())
	case 7:
		return f.float()
	case 8:
		return uint8(f.uint(8))
	case 9:
		return f.time()
	case 10:
		if f.coin(3) {
			return []string(nil)
		}
		return []string{f.string(), f.string()}[:f.intn(3)]
	case 11:
		return int32(f.int(32))
	case 12:
		return f.uint(64)
	case 13:
		t := f.time()
		return &t
	case 14:
		return f.raw()
	case 15:
		return f.details(depth + 1)
	case 16:
		return map[string]any(f.details(depth + 1))
	case 17, 18, 19:
		list := make([]any, f.intn(3))
		for i := range list {
			list[i] = f.anyValue(depth + 1)
		}
		return list
	// The kinds the encoder refuses.
	case 20:
		return float32(1.5)
	case 21:
		return struct{ A int }{1}
	case 22:
		return domain.Risk("low")
	case 23:
		return map[string]string{"b": "1", "a": "2"}
	case 24:
		return []int{1, 2}
	case 25:
		return (*time.Time)(nil)
	default:
		return math.Inf(1)
	}
}

// float returns a finite float64 around the bounds of the exponent form.
func (f *filler) float() float64 {
	specials := []float64{0, math.Copysign(0, -1), 0.1, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, -1e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 0.907154, 100}
	if f.coin(2) {
		return specials[f.intn(len(specials))]
	}
	x := math.Float64frombits(f.next())
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 1.5
	}
	return x
}
