package guard

import "testing"

// BenchmarkNormalizeHost is the cost of a URL host's normalisation: an
// ASCII name (lower-cased only), an IDN name (UTS #46 mapping and
// Punycode), a caller's A-label (decoded and validated) and a fullwidth
// spelling.
func BenchmarkNormalizeHost(b *testing.B) {
	for _, c := range []struct{ name, host string }{
		{"ascii", "API.Example.com"},
		{"idn", "bücher.example"},
		{"alabel", "xn--bcher-kva.example"},
		{"fullwidth", "ｍｅｔａｄａｔａ.google.internal"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NormalizeHost(c.host); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckURL is a whole egress check of an ASCII and an IDN URL
// under an allow-list.
func BenchmarkCheckURL(b *testing.B) {
	p := EgressPolicy{AllowedHosts: []string{"*.example.com", "xn--bcher-kva.example"}}
	for _, c := range []struct{ name, url string }{
		{"ascii", "https://api.example.com/v1/items?id=7"},
		{"idn", "https://bücher.example/v1/items?id=7"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if f := CheckURL(p, c.url); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
