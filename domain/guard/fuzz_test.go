package guard

import (
	"strings"
	"testing"
)

// FuzzNormalizePath: never panics; a normalised path normalises to itself
// and holds no "." or ".." element, no empty element, no NUL.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"/etc/../etc//shadow", "a/./b", "../x", "/srv/%2e%2e", "/etc\uff0fshadow", "~/.ssh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n, err := NormalizePath(p)
		if err != nil {
			return
		}
		if again, err := NormalizePath(n); err != nil || again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", p, n, again, err)
		}
		for _, e := range strings.Split(strings.TrimPrefix(n, "/"), "/") {
			if e == ".." || (e == "." && n != ".") || (e == "" && n != "/") {
				t.Fatalf("%q -> %q holds element %q", p, n, e)
			}
		}
		_ = CheckFile(FilePolicy{AllowedRoots: []string{"/srv"}, DeniedGlobs: []string{"**/x"}}, FileWrite, p)
	})
}

// FuzzParseTarget: never panics; the canonical host of a parsed URL
// parses back to itself.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"http://2130706433/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/", "https://A.example.COM.:443/", "http://u@h/", "http://[fe80::1%25e]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := ParseTarget(raw)
		_ = CheckURL(EgressPolicy{AllowedHosts: []string{"*.example.com", "10.0.0.1"}}, raw)
		if err != nil {
			return
		}
		h := tg.Host
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		back, err := ParseTarget(tg.Scheme + "://" + h + "/")
		if err != nil || back.Host != tg.Host || back.Addr != tg.Addr {
			t.Fatalf("%q -> %+v; reparsed %+v, %v", raw, tg, back, err)
		}
	})
}

// FuzzScan: never panics, offsets in range and increasing, bounded.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"ann@example.com", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00", "078-05-1120", "+44 20 7946 0958", "-----BEGIN PRIVATE KEY-----", `{"a":["x@y.io"]}`, "４１１１.1111.1111.1111\u200b", "key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		last := -1
		fs := Scan(s)
		if len(fs) > MaxPIIFindings {
			t.Fatalf("%d findings", len(fs))
		}
		for _, x := range fs {
			if x.Offset <= last || x.Offset >= len(s) {
				t.Fatalf("offset %d after %d in %d bytes", x.Offset, last, len(s))
			}
			last = x.Offset
		}
		if len(ScanJSON([]byte(s))) > MaxPIIFindings {
			t.Fatal("ScanJSON unbounded")
		}
		folded, last := foldText(s), -1
		for _, x := range ScanStrict(s) {
			if x.Offset <= last || x.Offset >= len(folded) {
				t.Fatalf("strict offset %d after %d in %d folded bytes", x.Offset, last, len(folded))
			}
			last = x.Offset
		}
		for _, strict := range []bool{false, true} {
			text := s
			if strict {
				text = foldText(s)
			}
			all, last := ScanWith(s, ScanMode{Strict: strict, All: true}), -1
			if len(all) > MaxPIIFindings+8 {
				t.Fatalf("ScanWith(all) unbounded: %d findings", len(all))
			}
			for _, x := range all {
				if x.Offset <= last || x.Offset >= len(text) {
					t.Fatalf("all offset %d after %d in %d bytes", x.Offset, last, len(text))
				}
				last = x.Offset
			}
			if len(ScanJSONWith([]byte(s), ScanMode{Strict: strict, All: true})) > MaxPIIFindings+8 {
				t.Fatal("ScanJSONWith(all) unbounded")
			}
		}
		if len(ScanJSONStrict([]byte(s))) > MaxPIIFindings {
			t.Fatal("ScanJSONStrict unbounded")
		}
	})
}
