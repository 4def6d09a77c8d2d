package guard

import (
	"strings"
	"testing"
)

// QWED-Agent spec v1.1 §2.2 (network requests: policy check; issue 16
// item 3, IDN tricks normalised): a host is read as UTS #46 maps it,
// so a fullwidth, ideographic-dot or soft-hyphen spelling of the metadata
// service is the metadata service, and an internationalised name is
// converted to its A-labels; what cannot be converted is refused.
func TestAgentSpec_2_2_NetworkIDN_Normalise(t *testing.T) {
	var long strings.Builder // 40 scattered CJK ideographs: an A-label over 63 bytes
	for i := range 40 {
		long.WriteRune(rune(0x4e00 + 397*i))
	}
	cases := []struct{ in, want, err string }{
		{"ｍｅｔａｄａｔａ.google.internal", "metadata.google.internal", ""},
		{"metadata。google．internal｡", "metadata.google.internal", ""},
		{"meta\u00addata.google.internal", "metadata.google.internal", ""},
		{"１６９.２５４.１６９.２５４", "169.254.169.254", ""},
		{"Bücher.Example", "xn--bcher-kva.example", ""},
		{"XN--BCHER-KVA.example", "xn--bcher-kva.example", ""},
		{"faß.de", "xn--fa-hia.de", ""}, // non-transitional: ß stays
		{"пример.рф", "xn--e1afmkfd.xn--p1ai", ""},
		{"api.example.com", "api.example.com", ""},
		{"_dmarc.example.com", "_dmarc.example.com", ""},
		// RFC 3492 §7.1 sample strings (B, C, E, G, J, K), as labels.
		{"他们为什么不说中文", "xn--ihqwcrb4cv8a8dqg056pqjye", ""},
		{"他們爲什麽不說中文", "xn--ihqwctvzc91f659drss3x8bo0yb", ""},
		{"למההםפשוטלאמדבריםעברית", "xn--4dbcagdahymbxekheh6e0a7fei0b", ""},
		{"なぜみんな日本語を話してくれないのか", "xn--n8jok5ay5dzabd5bym9f0cm5685rrjetr6pdxa", ""},
		{"PorquénopuedensimplementehablarenEspañol", "xn--porqunopuedensimplementehablarenespaol-fmd56a", ""},
		{"TạisaohọkhôngthểchỉnóitiếngViệt", "xn--tisaohkhngthchnitingvit-kjcr8268qyxafd2f1b9g", ""},
		// RFC 3492 sample H: its A-label is 72 bytes, over a label's 63.
		{"세계의모든사람들이한국어를이해한다면얼마나좋을까", "", "invalid host label"},
		{long.String() + ".example", "", "invalid host label"},
		{strings.Repeat("ü.", 60) + "example", "", "longer than 253"},
		{"xn--abc", "", "internationalised"},          // not Punycode of anything valid
		{"xn--abc-.example", "", "internationalised"}, // decodes to ASCII
		{"xn--Bcher-KVA.example", "xn--bcher-kva.example", ""},
		{"xn--bcher-kva-.example", "", "internationalised"},
		{"xn--zca.example", "xn--zca.example", ""}, // ß
		{"xn--SS-.example", "", "internationalised"},
		{"xn--.example", "", ""},
		{"a\u200db.example", "", "internationalised"},       // ZWJ outside ContextJ
		{"\u05d0a.example", "", "internationalised"},        // Bidi rule: RTL label ending in L
		{"example\uff0fevil.com", "", "invalid host label"}, // fullwidth solidus maps to '/'
		{"exam\u3000ple.com", "", ""},                       // ideographic space maps to ' '
		{"a..b", "", "invalid host label"},
		{"\xff.example", "", "UTF-8"},
		{"\ufffd.example", "", ""},
		{"\u2488.example", "", ""}, // DIGIT ONE FULL STOP: disallowed in UTS #46 lookup
		{"", "", "empty"},
	}
	for _, c := range cases {
		got, err := NormalizeHost(c.in)
		if c.want == "" {
			if err == nil || (c.err != "" && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("NormalizeHost(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			if err != nil && !isASCII(err.Error()) {
				t.Errorf("NormalizeHost(%q): error %q quotes the input", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// The checks run on the ASCII form: the metadata service and private
// addresses in fullwidth spellings are refused as such, an allowed
// Unicode name matches its A-label, and a look-alike (Cyrillic "а" in
// "pаypal") converts to another A-label, which does not match.
func TestAgentSpec_2_2_NetworkIDN_Policy(t *testing.T) {
	allowEntry, err := NormalizeHostEntry("*.Bücher.example")
	if err != nil || allowEntry != "*.xn--bcher-kva.example" {
		t.Fatalf("NormalizeHostEntry = %q, %v", allowEntry, err)
	}
	paypal, _ := NormalizeHostEntry("paypal.com")
	scoped := EgressPolicy{AllowedHosts: []string{allowEntry, paypal}}
	cases := []struct {
		p    EgressPolicy
		url  string
		rule string
	}{
		{EgressPolicy{}, "http://ｍｅｔａｄａｔａ.google.internal/computeMetadata/v1/", "metadata_address"},
		{EgressPolicy{}, "http://１６９.２５４.１６９.２５４/latest/meta-data/", "metadata_address"},
		{EgressPolicy{}, "http://１２７。０。０。１:8080/", "non_public_address"},
		{EgressPolicy{}, "http://ｌｏｃａｌｈｏｓｔ/", "non_public_address"},
		{EgressPolicy{}, "https://bücher.example/", ""},
		{EgressPolicy{}, "https://xn--abc-.example/", "unnormalisable"},
		{scoped, "https://shop.BÜCHER.example/", ""},
		{scoped, "https://shop.xn--bcher-kva.example/", ""},
		{scoped, "https://paypal.com/", ""},
		{scoped, "https://p\u0430ypal.com/", "host_not_allowed"},
		{scoped, "https://ｐａｙｐａｌ.com/", ""}, // fullwidth Latin is Latin
		{EgressPolicy{ASCIIHosts: true}, "https://bücher.example/", "unnormalisable"},
		{EgressPolicy{ASCIIHosts: true}, "https://xn--abc-.example/", ""},
	}
	for _, c := range cases {
		f := CheckURL(c.p, c.url)
		got := ""
		if f != nil {
			got = f.Rule
		}
		if got != c.rule {
			t.Errorf("CheckURL(%+v, %q) = %+v; want rule %q", c.p, c.url, f, c.rule)
		}
	}
	for _, bad := range []string{"xn--abc-.example", "*.", "１０.０.０.１", "a..b", "ex ample.com"} {
		if n, err := NormalizeHostEntry(bad); err == nil {
			t.Errorf("NormalizeHostEntry(%q) = %q; want an error", bad, n)
		}
	}
}

// FuzzNormalizeHost: never panics; what it returns is lower-case ASCII
// LDH labels within DNS lengths and normalises to itself.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"ｍｅｔａｄａｔａ.google.internal", "Bücher.example", "xn--bcher-kva.example", "xn--abc-", "１６９.２５４.１６９.２５４", "a\u200db", "\u05d0a", "metadata。google.internal"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		n, err := NormalizeHost(h)
		if err != nil {
			return
		}
		if len(n) > MaxHostBytes || !isASCII(n) || strings.ToLower(n) != n {
			t.Fatalf("%q -> %q", h, n)
		}
		for l := range strings.SplitSeq(n, ".") {
			if !validLabel(l) {
				t.Fatalf("%q -> %q: label %q", h, n, l)
			}
		}
		if again, err := NormalizeHost(n); err != nil || again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", h, n, again, err)
		}
	})
}
