package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"
)

// The kinds of PII and secrets Scan finds.
const (
	PIIEmail      = "email"
	PIIPhone      = "phone"
	PIICard       = "card_number"
	PIIIBAN       = "iban"
	PIISSN        = "us_ssn"
	PIISecret     = "secret"
	PIIPrivateKey = "private_key"
	PIIEntropy    = "high_entropy_string"
)

// MaxPIIFindings bounds the findings of one scan (with ScanMode.All: plus
// the first of each kind found after it, so at most MaxPIIFindings and one
// per kind); MaxScanBytes the text one scan reads (the rest is not read:
// callers bound their inputs first).
const (
	MaxPIIFindings = 16
	MaxScanBytes   = 1 << 20
)

// PIIFinding is one thing found: its kind and where (a byte offset in the
// scanned text, or the JSON path of the string it was in). It never
// holds the value found.
type PIIFinding struct {
	Kind   string
	Where  string
	Offset int
}

// secretPrefixes are the prefixes of well-known credentials and the
// least number of token characters that must follow.
var secretPrefixes = []struct {
	prefix string
	min    int
}{
	{"AKIA", 16}, {"ASIA", 16}, {"ghp_", 36}, {"gho_", 36}, {"ghu_", 36}, {"ghs_", 36}, {"ghr_", 36},
	{"github_pat_", 22}, {"glpat-", 20}, {"sk_live_", 24}, {"rk_live_", 24}, {"sk_test_", 24},
	{"xoxb-", 10}, {"xoxp-", 10}, {"xoxa-", 10}, {"xoxs-", 10}, {"xapp-", 10}, {"AIza", 35},
	{"sk-ant-", 32}, {"sk-proj-", 32}, {"npm_", 36}, {"pypi-", 32},
}

// Scan finds PII and secrets in text, deterministically, in the order of
// their offsets, at most MaxPIIFindings. Checksums are required where the
// format has one: card numbers (13-19 digits, spaces or hyphens between
// groups) pass Luhn, IBANs (spaced or not) pass ISO 13616 mod 97, US SSNs
// (ddd-dd-dddd) respect the SSA's area, group and serial rules. Phone
// numbers are "+" and 8-15 digits, or the North American ten-digit forms
// with separators. Secrets are known prefixes with enough token
// characters after them, PEM private key headers, and tokens of at least
// 32 characters mixing upper, lower case and digits with a Shannon
// entropy of at least 4.2 bits per character.
func Scan(text string) []PIIFinding { return scan(text, ScanMode{}) }

// ScanStrict is Scan as the guards' second review reads text (the
// gate's Config.StrictGuards): Unicode digits, spaces and fullwidth forms
// are read as their ASCII counterparts and zero-width characters dropped
// first (Offset is then an offset in that folded text); a card number
// also has dots between its groups and must have a card scheme's prefix
// and length (so IMEIs and most numeric ids do not read as cards); an
// IBAN may be in lower case and must have its country's length; a secret
// after "key=" or "/" inside a longer token is found (it was taken for
// an opaque token), and PGP private key blocks are private keys.
func ScanStrict(text string) []PIIFinding { return ScanWith(text, ScanMode{Strict: true}) }

// ScanMode chooses how a scan reads. Strict reads as ScanStrict. All reads
// the whole input: past MaxPIIFindings it still reports the first finding
// of each kind not yet found, so that no number of addresses or phone
// numbers hides a card number or a credential after them (Scan stops at
// the bound; its answers stay those the logs decided with it recorded).
// Keys makes ScanJSONWith read every object key as content too, and
// write the pointer segment of a key holding a finding as
// "~redacted~N" (N the key's index among its object's members, from 0,
// in document order; "~r" is no RFC 6901 escape, so no key's segment
// reads so), so that no finding's Where repeats the value it found.
type ScanMode struct {
	Strict bool
	All    bool
	Keys   bool
}

// ScanWith is Scan read as m says.
func ScanWith(text string, m ScanMode) []PIIFinding {
	if m.Strict {
		text = foldText(text)
	}
	return scan(text, m)
}

func scan(text string, m ScanMode) []PIIFinding {
	if len(text) > MaxScanBytes {
		text = text[:MaxScanBytes]
	}
	var out []PIIFinding
	for i := 0; i < len(text); {
		if i > 0 && isWord(text[i-1]) {
			i++
			continue
		}
		if n, kind := scanAt(text, i, m.Strict); n > 0 {
			if !keep(&out, PIIFinding{Kind: kind, Offset: i}, m.All) {
				break
			}
			i += n
			continue
		}
		i++
	}
	return out
}

// keep adds f to out while out holds fewer than MaxPIIFindings findings,
// or (all) when no finding of f's kind is in out; it reports whether the
// scan goes on.
func keep(out *[]PIIFinding, f PIIFinding, all bool) bool {
	if len(*out) < MaxPIIFindings || all && !slices.ContainsFunc(*out, func(g PIIFinding) bool { return g.Kind == f.Kind }) {
		*out = append(*out, f)
	}
	return all || len(*out) < MaxPIIFindings
}

// scanAt tries every detector at a word start i: the length consumed and
// the kind, or 0.
func scanAt(text string, i int, strict bool) (int, string) {
	rest := text[i:]
	if strings.HasPrefix(rest, "-----BEGIN ") {
		if h := rest[:min(len(rest), 64)]; strings.Contains(h, "PRIVATE KEY-----") {
			return strings.Index(h, "PRIVATE KEY-----") + len("PRIVATE KEY-----"), PIIPrivateKey
		} else if strict && strings.HasPrefix(h, "-----BEGIN PGP PRIVATE KEY BLOCK-----") {
			return len("-----BEGIN PGP PRIVATE KEY BLOCK-----"), PIIPrivateKey
		}
	}
	tok := tokenAt(text, i)
	for _, p := range secretPrefixes {
		if strings.HasPrefix(tok, p.prefix) && len(tok)-len(p.prefix) >= p.min {
			return len(tok), PIISecret
		}
	}
	if n := emailAt(text, i); n > 0 {
		return n, PIIEmail
	}
	if n := ibanAt(text, i, strict); n > 0 {
		return n, PIIIBAN
	}
	if n, kind := numberAt(text, i, strict); n > 0 {
		return n, kind
	}
	if len(tok) >= 32 && highEntropy(tok) {
		if strict && secretInside(tok) {
			return len(tok), PIISecret
		}
		return len(tok), PIIEntropy
	}
	return 0, ""
}

// secretInside reports whether a known credential prefix opens tok after
// one of its "-+/=" characters ("key=AIza…", "v1/ghp_…"), with enough
// token characters after it.
func secretInside(tok string) bool {
	for j := 1; j < len(tok); j++ {
		if strings.IndexByte("-+/=", tok[j-1]) < 0 {
			continue
		}
		for _, p := range secretPrefixes {
			if strings.HasPrefix(tok[j:], p.prefix) && len(tok)-j-len(p.prefix) >= p.min {
				return true
			}
		}
	}
	return false
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// tokenAt is the run of token characters (letters, digits, "_-+/=") at i.
func tokenAt(text string, i int) string {
	j := i
	for j < len(text) && (isWord(text[j]) || strings.IndexByte("-+/=", text[j]) >= 0) {
		j++
	}
	return text[i:j]
}

// emailAt matches local@domain.tld at i (local starting at i).
func emailAt(text string, i int) int {
	j := i
	for j < len(text) && (isWord(text[j]) || strings.IndexByte(".%+-", text[j]) >= 0) {
		j++
	}
	if j == i || j >= len(text) || text[j] != '@' {
		return 0
	}
	k, lastDot := j+1, -1
	for k < len(text) && (isWord(text[k]) || text[k] == '-' || text[k] == '.') {
		if text[k] == '.' {
			lastDot = k
		}
		k++
	}
	for k > j+1 && text[k-1] == '.' { // a sentence's full stop
		k--
		lastDot = strings.LastIndexByte(text[j+1:k], '.')
		if lastDot >= 0 {
			lastDot += j + 1
		}
	}
	if lastDot <= j+1 || k-lastDot-1 < 2 {
		return 0
	}
	for _, c := range []byte(text[lastDot+1 : k]) {
		if !('a' <= c|0x20 && c|0x20 <= 'z') {
			return 0
		}
	}
	return k - i
}

// ibanAt matches an IBAN at i: two capital letters, two digits, then
// 11-30 capitals or digits, optionally in groups separated by single
// spaces, passing mod 97. The longest valid reading wins.
//
// strict: letters in either case, and the length must be the country's
// (ibanLengths).
func ibanAt(text string, i int, strict bool) int {
	upper := func(c byte) byte {
		if strict && 'a' <= c && c <= 'z' {
			return c - 'a' + 'A'
		}
		return c
	}
	if i+4 > len(text) || !isUpper(upper(text[i])) || !isUpper(upper(text[i+1])) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
		return 0
	}
	want := 0
	if strict {
		if want = ibanLengths[string([]byte{upper(text[i]), upper(text[i+1])})]; want == 0 {
			return 0
		}
	}
	var chars []byte
	var ends []int
	for j := i; j < len(text) && len(chars) < 34; j++ {
		c := upper(text[j])
		switch {
		case isUpper(c) || isDigit(c):
			chars = append(chars, c)
			ends = append(ends, j+1)
		case c == ' ' && j+1 < len(text) && (isUpper(upper(text[j+1])) || isDigit(text[j+1])) && len(chars) >= 4:
		default:
			j = len(text)
		}
	}
	for n := len(chars); n >= 15; n-- {
		if want != 0 && n != want {
			continue
		}
		if (ends[n-1] == len(text) || !isWord(text[ends[n-1]])) && mod97(chars[:n]) == 1 {
			return ends[n-1] - i
		}
	}
	return 0
}

// ibanLengths are the IBAN lengths of the countries of the IBAN registry
// (SWIFT, ISO 13616).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// mod97 is ISO 7064 mod 97-10 of an IBAN (first four characters moved to
// the end, letters as 10-35).
func mod97(s []byte) int {
	r := 0
	for _, c := range append(slices.Clone(s[4:]), s[:4]...) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
		} else {
			r = (r*100 + int(c-'A'+10)) % 97
		}
	}
	return r
}

// numberAt reads a run of digits and separators at i and classifies it:
// SSN, card number or phone number.
//
// strict: a card's groups may be separated by dots too, and its digits
// must have a card scheme's prefix and length (cardScheme).
func numberAt(text string, i int, strict bool) (int, string) {
	j := i
	if j < len(text) && (text[j] == '+' || text[j] == '(') {
		j++
	}
	var digits []byte
	for j < len(text) {
		c := text[j]
		switch {
		case isDigit(c):
			digits = append(digits, c)
		case strings.IndexByte(" -.()", c) >= 0 && j+1 < len(text) && (isDigit(text[j+1]) || text[j+1] == ' ' || text[j+1] == '('):
		default:
			goto done
		}
		j++
	}
done:
	for j > i && !isDigit(text[j-1]) {
		j--
	}
	if len(digits) == 0 || (j < len(text) && isWord(text[j])) {
		return 0, ""
	}
	s := text[i:j]
	switch {
	case ssn(s):
		return j - i, PIISSN
	case strict && len(digits) >= 13 && len(digits) <= 19 && strings.Trim(s, "0123456789 -.") == "" && cardScheme(digits) && luhn(digits):
		return j - i, PIICard
	case !strict && len(digits) >= 13 && len(digits) <= 19 && strings.Trim(s, "0123456789 -") == "" && digits[0] >= '2' && digits[0] <= '6' && luhn(digits):
		return j - i, PIICard
	case text[i] == '+' && len(digits) >= 8 && len(digits) <= 15:
		return j - i, PIIPhone
	case len(digits) == 10 && nanp(s):
		return j - i, PIIPhone
	}
	return 0, ""
}

// cardScheme reports whether digits have the prefix and length of a
// card scheme: Visa (4; 13, 16, 19), Mastercard (51-55, 2221-2720; 16),
// Mir (2200-2204; 16-19), American Express (34, 37; 15), Diners Club
// (300-305, 36, 38, 39; 14-19), JCB (3528-3589; 16-19), Maestro (50,
// 56-59; 12-19), and Discover, UnionPay and Maestro's 6 (16-19).
func cardScheme(d []byte) bool {
	n := len(d)
	p := func(k int) int { // the first k digits as a number
		v := 0
		for _, c := range d[:k] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	switch d[0] {
	case '2':
		return n == 16 && p(4) >= 2221 && p(4) <= 2720 || n >= 16 && p(4) >= 2200 && p(4) <= 2204
	case '3':
		return n == 15 && (p(2) == 34 || p(2) == 37) ||
			n >= 14 && (p(3) >= 300 && p(3) <= 305 || p(2) == 36 || p(2) == 38 || p(2) == 39) ||
			n >= 16 && p(4) >= 3528 && p(4) <= 3589
	case '4':
		return n == 13 || n == 16 || n == 19
	case '5':
		return n == 16 && p(2) >= 51 && p(2) <= 55 || p(2) == 50 || p(2) >= 56
	case '6':
		return n >= 16
	}
	return false
}

// ssn matches ddd-dd-dddd with a valid area (not 000, 666 or 9xx), group
// (not 00) and serial (not 0000).
func ssn(s string) bool {
	if len(s) != 11 || s[3] != '-' || s[6] != '-' {
		return false
	}
	for k, c := range []byte(s) {
		if k != 3 && k != 6 && !isDigit(c) {
			return false
		}
	}
	return s[:3] != "000" && s[:3] != "666" && s[0] != '9' && s[4:6] != "00" && s[7:] != "0000"
}

// nanp matches (ddd) ddd-dddd, ddd-ddd-dddd, ddd.ddd.dddd, ddd ddd dddd.
func nanp(s string) bool {
	shape := []byte(s)
	for k, c := range shape {
		if isDigit(c) {
			shape[k] = 'd'
		}
	}
	switch string(shape) {
	case "(ddd) ddd-dddd", "ddd-ddd-dddd", "ddd.ddd.dddd", "ddd ddd dddd", "(ddd)ddd-dddd":
		return true
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k] - '0')
		if (len(d)-1-k)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// highEntropy: upper, lower and digits all present and at least 4.2 bits
// of Shannon entropy per character.
func highEntropy(tok string) bool {
	var up, lo, dig bool
	var counts [256]int
	for _, c := range []byte(tok) {
		counts[c]++
		up = up || isUpper(c)
		lo = lo || ('a' <= c && c <= 'z')
		dig = dig || isDigit(c)
	}
	if !up || !lo || !dig {
		return false
	}
	h, n := 0.0, float64(len(tok))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 4.2
}

// ScanJSON scans every string (and number literal) of a JSON document,
// after JSON unescaping, in document order; Where is the JSON pointer of
// the value (RFC 6901). A document that does not decode is scanned as
// text. Keys are not scanned (ScanMode.Keys scans them).
func ScanJSON(doc []byte) []PIIFinding { return ScanJSONWith(doc, ScanMode{}) }

// ScanJSONStrict is ScanJSON reading each string as ScanStrict does.
func ScanJSONStrict(doc []byte) []PIIFinding { return ScanJSONWith(doc, ScanMode{Strict: true}) }

// ScanJSONWith is ScanJSON reading each string as ScanWith(m) does.
func ScanJSONWith(doc []byte, m ScanMode) []PIIFinding {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []PIIFinding
	var stack []string   // pointer elements
	var inObj []bool     // per container: object?
	var expectKey []bool // per container: next token is a key
	var arrIndex []int   // per container: next index of an array, or next member of an object
	pointer := func() string {
		if len(stack) == 0 {
			return ""
		}
		return "/" + strings.Join(stack, "/")
	}
	for m.All || len(out) < MaxPIIFindings {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			return ScanWith(string(doc), m)
		}
		top := len(inObj) - 1
		if top >= 0 && inObj[top] && expectKey[top] {
			if k, ok := tok.(string); ok {
				seg := strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
				var found []PIIFinding
				if m.Keys {
					found = ScanWith(k, m)
					if len(found) > 0 {
						seg = "~redacted~" + itoa(arrIndex[top])
					}
					arrIndex[top]++
				}
				stack = append(stack, seg)
				expectKey[top] = false
				for _, f := range found {
					f.Where = pointer()
					if !keep(&out, f, m.All) {
						break
					}
				}
				continue
			}
		}
		if top >= 0 && !inObj[top] {
			if d, ok := tok.(json.Delim); !ok || d != ']' {
				stack = append(stack, itoa(arrIndex[top]))
				arrIndex[top]++
			}
		}
		var text string
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				inObj, expectKey, arrIndex = append(inObj, v == '{'), append(expectKey, v == '{'), append(arrIndex, 0)
				continue
			}
			inObj, expectKey, arrIndex = inObj[:top], expectKey[:top], arrIndex[:top]
		case string:
			text = v
		case json.Number:
			text = string(v)
		}
		if text != "" {
			for _, f := range ScanWith(text, m) {
				f.Where = pointer()
				if !keep(&out, f, m.All) {
					break
				}
			}
		}
		// leave the value: pop its pointer element
		if len(inObj) > 0 && len(stack) > 0 {
			stack = stack[:len(stack)-1]
			if inObj[len(inObj)-1] {
				expectKey[len(expectKey)-1] = true
			}
		}
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// foldText reads Unicode decimal digits as ASCII digits, space separators
// as a space and fullwidth ASCII forms as ASCII, and drops zero-width
// characters and soft hyphens, so "４１１１ １１１１…" or a card number
// split by U+200B reads as its ASCII digits. ASCII text is returned as
// it is.
func foldText(text string) string {
	ascii := true
	for i := 0; i < len(text) && ascii; i++ {
		ascii = text[i] < 0x80
	}
	if ascii {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF || r == 0x00AD:
		case 0xFF01 <= r && r <= 0xFF5E:
			b.WriteByte(byte(r - 0xFEE0))
		case unicode.Is(unicode.Zs, r):
			b.WriteByte(' ')
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + digitValue(r)))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// digitValue is the value of a Unicode decimal digit: every range of
// unicode.Nd runs from a zero through nines, ten by ten.
func digitValue(r rune) int {
	for _, g := range unicode.Nd.R16 {
		if rune(g.Lo) <= r && r <= rune(g.Hi) {
			return int(r-rune(g.Lo)) % 10
		}
	}
	for _, g := range unicode.Nd.R32 {
		if rune(g.Lo) <= r && r <= rune(g.Hi) {
			return int(r-rune(g.Lo)) % 10
		}
	}
	return 0
}
