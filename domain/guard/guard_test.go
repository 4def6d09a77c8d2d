package guard

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// QWED-Agent spec v1.1 §2.2, file operations: the path is normalised
// lexically and refused when it cannot be.
func TestSeed2_2_FileOperations_Normalise(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"/etc/../etc//shadow", "/etc/shadow", ""},
		{"/srv/data/./x/../y", "/srv/data/y", ""},
		{"/../../etc/passwd", "/etc/passwd", ""},
		{"///a//b/", "/a/b", ""},
		{"reports/q1.txt", "reports/q1.txt", ""},
		{"~/.ssh/id_rsa", "~/.ssh/id_rsa", ""},
		{"../secret", "", "climbs"},
		{"a/../../b", "", "climbs"},
		{"", "", "empty"},
		{"/etc/shadow\x00.txt", "", "control"},
		{"/etc/sha\ndow", "", "control"},
		{`C:\Windows\system32`, "", "backslash"},
		{"/etc/%73hadow", "", "percent"},
		{"/srv/%2e%2e/etc/shadow", "", "percent"},
		{"/etc\uff0fshadow", "", "Unicode"},
		{"/srv/\u2024\u2024/etc", "", "Unicode"},
		{"/srv/\xff", "", "UTF-8"},
		{"/" + strings.Repeat("a", MaxPathBytes), "", "longer"},
		{"/srv/100%/x", "/srv/100%/x", ""},
		{"/srv/café", "/srv/café", ""},
	}
	for _, c := range cases {
		got, err := NormalizePath(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("NormalizePath(%q) = %q, %v; want error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// QWED-Agent spec v1.1 §2.2, file operations (security check, high risk):
// sensitive system paths are denied by default; an agent's roots and
// globs narrow further.
func TestSeed2_2_FileOperations_Policy(t *testing.T) {
	none := FilePolicy{}
	scoped := FilePolicy{AllowedRoots: []string{"/srv/data", "/tmp"}, DeniedGlobs: []string{"**/*.sqlite", "/srv/data/private/**"}}
	cases := []struct {
		p    FilePolicy
		op   FileOp
		path string
		rule string
	}{
		{none, FileRead, "/etc/shadow", "sensitive_path"},
		{none, FileRead, "/etc/./shadow", "sensitive_path"},
		{none, FileRead, "//etc//shadow", "sensitive_path"},
		{none, FileRead, "/tmp/../etc/shadow", "sensitive_path"},
		{none, FileRead, "/etc/passwd", ""},
		{none, FileWrite, "/etc/passwd", "sensitive_path"},
		{none, FileDelete, "/etc/hosts", "sensitive_path"},
		{none, FileRead, "/proc/self/environ", "sensitive_path"},
		{none, FileRead, "/sys/kernel/notes", "sensitive_path"},
		{none, FileRead, "/root/notes", "sensitive_path"},
		{none, FileRead, "/home/ann/.ssh/id_ed25519", "sensitive_path"},
		{none, FileRead, "~/.ssh/authorized_keys", "sensitive_path"},
		{none, FileWrite, "/home/ann/.ssh", "sensitive_path"},
		{none, FileRead, "/home/ann/.aws/credentials", "sensitive_path"},
		{none, FileRead, "/app/.env", "sensitive_path"},
		{none, FileRead, ".env.production", "sensitive_path"},
		{none, FileRead, "/var/run/secrets/kubernetes.io/serviceaccount/token", "sensitive_path"},
		{none, FileRead, "/tmp/report.txt", ""},
		{none, FileRead, "/etc/sh%61dow", "unnormalisable"},
		{scoped, FileRead, "/srv/data/q1.csv", ""},
		{scoped, FileWrite, "/srv/data", ""},
		{scoped, FileRead, "/srv/database/x", "outside_allowed_roots"},
		{scoped, FileRead, "/srv/data/../../home/x", "outside_allowed_roots"},
		{scoped, FileRead, "reports/q1.txt", "outside_allowed_roots"},
		{scoped, FileRead, "/srv/data/app.sqlite", "denied_path"},
		{scoped, FileRead, "/srv/data/private/a/b", "denied_path"},
		{scoped, FileRead, "/tmp/.env", "sensitive_path"},
	}
	for _, c := range cases {
		f := CheckFile(c.p, c.op, c.path)
		got := ""
		if f != nil {
			got = f.Rule
		}
		if got != c.rule {
			t.Errorf("CheckFile(%v, %d, %q) = %+v; want rule %q", c.p, c.op, c.path, f, c.rule)
		}
	}
}

func TestMatchGlobAndValid(t *testing.T) {
	for _, c := range []struct {
		pat, p string
		want   bool
	}{
		{"**/.ssh/**", "/home/a/.ssh/k", true},
		{"**/.ssh/**", ".ssh/k", true},
		{"**/.ssh/**", "/home/a/.sshx/k", false},
		{"/srv/*/x", "/srv/a/x", true},
		{"/srv/*/x", "/srv/a/b/x", false},
		{"/srv/**", "/srv", true},
		{"[", "[", false},
	} {
		if got := MatchGlob(c.pat, c.p); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v", c.pat, c.p, got)
		}
	}
	for _, bad := range []string{"", "/a**/b", "/[", strings.Repeat("**/", 9) + "x"} {
		if ValidGlob(bad) == nil {
			t.Errorf("ValidGlob(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"srv", "/srv/", "/srv/../x", ""} {
		if ValidRoot(bad) == nil {
			t.Errorf("ValidRoot(%q) accepted", bad)
		}
	}
	if ValidRoot("/srv/data") != nil || ValidGlob("**/*.sqlite") != nil {
		t.Error("valid root or glob refused")
	}
}

// QWED-Agent spec v1.1 §2.2, network requests (policy check): every
// spelling of an address normalises to one canonical host.
func TestSeed2_2_NetworkRequests_Normalise(t *testing.T) {
	cases := []struct{ in, host, err string }{
		{"http://2130706433/", "127.0.0.1", ""},
		{"http://0x7f.1/", "127.0.0.1", ""},
		{"http://0177.0.0.1/", "127.0.0.1", ""},
		{"http://127.1/", "127.0.0.1", ""},
		{"http://0x7f000001/", "127.0.0.1", ""},
		{"http://[::ffff:127.0.0.1]/", "127.0.0.1", ""},
		{"http://[::ffff:a9fe:a9fe]/", "169.254.169.254", ""},
		{"http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254", ""},
		{"HTTP://API.Example.COM./v1", "api.example.com", ""},
		{"https://api.example.com:8443/x", "api.example.com", ""},
		{"https://xn--e1afmkfd.xn--p1ai/", "xn--e1afmkfd.xn--p1ai", ""},
		{"http://user:pw@api.example.com/", "", "userinfo"},
		{"http://api.example.com@169.254.169.254/", "", "userinfo"},
		{`http://api.example.com\@evil.example/`, "", "backslash"},
		{"http://пример.рф/", "xn--e1afmkfd.xn--p1ai", ""},
		{"http://exa%6dple.com/", "", ""},
		{"http://256.1.1.1/", "", "numeric host"},
		{"http://1.2.3.4.5/", "", "numeric host"},
		{"http://example.123/", "", "numeric host"},
		{"http://[fe80::1%25eth0]/", "", "zoned"},
		{"http://a.com:0/", "", "port"},
		{"http://a.com:080/", "", "port"},
		{"http://a.com:99999/", "", "port"},
		{"/relative/path", "", "no scheme"},
		{"mailto:ann@example.com", "", "no scheme or host"},
		{"http://a b.com/", "", "space"},
	}
	for _, c := range cases {
		got, err := ParseTarget(c.in)
		if c.host == "" {
			if err == nil || (c.err != "" && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("ParseTarget(%q) = %+v, %v; want error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got.Host != c.host {
			t.Errorf("ParseTarget(%q) = %+v, %v; want host %q", c.in, got, err, c.host)
		}
	}
	got, _ := ParseTarget("https://api.example.com/")
	if got.Port != 443 || got.Scheme != "https" {
		t.Errorf("default port: %+v", got)
	}
}

// QWED-Agent spec v1.1 §2.2, network requests: private, loopback,
// link-local and metadata destinations are denied by default; the agent's
// egress policy restricts hosts, schemes and ports.
func TestSeed2_2_NetworkRequests_Policy(t *testing.T) {
	none := EgressPolicy{}
	scoped := EgressPolicy{AllowedHosts: []string{"api.example.com", "*.cdn.example.net", "10.0.0.5"}, AllowedPorts: []int{443, 8443}, AllowedSchemes: []string{"https"}}
	cases := []struct {
		p    EgressPolicy
		url  string
		rule string
	}{
		{none, "https://api.example.com/v1", ""},
		{none, "http://169.254.169.254/latest/meta-data/", "metadata_address"},
		{none, "http://[fd00:ec2::254]/", "metadata_address"},
		{none, "http://metadata.google.internal./computeMetadata/v1/", "metadata_address"},
		{none, "http://2852039166/", "metadata_address"},
		{none, "http://2130706433/", "non_public_address"},
		{none, "http://0x7f.1/", "non_public_address"},
		{none, "http://localhost:8080/", "non_public_address"},
		{none, "http://admin.localhost/", "non_public_address"},
		{none, "http://[::1]/", "non_public_address"},
		{none, "http://10.1.2.3/", "non_public_address"},
		{none, "http://192.168.0.1/", "non_public_address"},
		{none, "http://172.16.0.1/", "non_public_address"},
		{none, "http://169.254.1.1/", "non_public_address"},
		{none, "http://[fe80::1]/", "non_public_address"},
		{none, "http://[fc00::1]/", "non_public_address"},
		{none, "http://100.64.0.1/", "non_public_address"},
		{none, "http://0.0.0.0/", "non_public_address"},
		{none, "http://[::ffff:10.0.0.1]/", "non_public_address"},
		{none, "file:///etc/passwd", "unnormalisable"},
		{none, "gopher://api.example.com/", "scheme_not_allowed"},
		{none, "http://user@api.example.com/", "unnormalisable"},
		{scoped, "https://api.example.com/v1", ""},
		{scoped, "https://api.example.com:8443/v1", ""},
		{scoped, "http://api.example.com/v1", "scheme_not_allowed"},
		{scoped, "https://api.example.com:8080/", "port_not_allowed"},
		{scoped, "https://img.cdn.example.net/a.png", ""},
		{scoped, "https://cdn.example.net/a.png", "host_not_allowed"},
		{scoped, "https://evil.example/", "host_not_allowed"},
		{scoped, "https://api.example.com.evil.example/", "host_not_allowed"},
		{scoped, "https://10.0.0.5/", ""},
		{scoped, "https://10.0.0.6/", "non_public_address"},
		{EgressPolicy{AllowedHosts: []string{"169.254.169.254"}}, "http://169.254.169.254/", "metadata_address"},
	}
	for _, c := range cases {
		f := CheckURL(c.p, c.url)
		got := ""
		if f != nil {
			got = f.Rule
		}
		if got != c.rule {
			t.Errorf("CheckURL(%v, %q) = %+v; want rule %q", c.p, c.url, f, c.rule)
		}
	}
}

func TestClassifyAddrAndHostEntries(t *testing.T) {
	for a, want := range map[string]string{
		"8.8.8.8": "", "2001:4860:4860::8888": "", "127.0.0.2": "loopback", "::": "unspecified",
		"224.0.0.1": "multicast", "255.255.255.255": "multicast", "240.0.0.1": "reserved", "198.18.0.1": "reserved",
		"::ffff:169.254.169.254": "metadata", "100.100.100.200": "metadata", "::7f00:1": "loopback",
	} {
		if got := ClassifyAddr(netip.MustParseAddr(a)); got != want {
			t.Errorf("ClassifyAddr(%s) = %q; want %q", a, got, want)
		}
	}
	for _, bad := range []string{"", "*.", "API.example.com", "a..b", "пример.рф"} {
		if ValidHostEntry(bad) == nil {
			t.Errorf("ValidHostEntry(%q) accepted", bad)
		}
	}
	for _, ok := range []string{"api.example.com", "*.example.com", "10.0.0.5", "::1"} {
		if err := ValidHostEntry(ok); err != nil {
			t.Errorf("ValidHostEntry(%q): %v", ok, err)
		}
	}
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage, QWED protocol v1.0 §8
// QWED-SEC-003: deterministic detectors with checksums.
func TestSeed5_2_NoPIILeakage_Scan(t *testing.T) {
	kinds := func(fs []PIIFinding) []string {
		var k []string
		for _, f := range fs {
			k = append(k, f.Kind)
		}
		return k
	}
	cases := []struct {
		in   string
		want []string
	}{
		{"write to ann.lee+news@mail.example.co.uk.", []string{PIIEmail}},
		{"card 4111 1111 1111 1111 exp", []string{PIICard}},
		{"card 4111-1111-1111-1111", []string{PIICard}},
		{"card 4111111111111112", nil},
		{"iban DE89 3704 0044 0532 0130 00 thanks", []string{PIIIBAN}},
		{"iban GB82WEST12345698765432", []string{PIIIBAN}},
		{"iban GB82WEST12345698765433", nil},
		{"ssn 078-05-1120", []string{PIISSN}},
		{"ssn 666-05-1120 or 900-12-3456 or 123-00-4567", nil},
		{"call +44 20 7946 0958 now", []string{PIIPhone}},
		{"call (415) 555-0132", []string{PIIPhone}},
		{"call 415-555-0132", []string{PIIPhone}},
		{"order 12345 of 2026-11-26", nil},
		{"key AKIAIOSFODNN7EXAMPLE", []string{PIISecret}},
		{"token=ghp_" + strings.Repeat("a1B2", 9), []string{PIISecret}},
		{"sk_live_" + strings.Repeat("x", 24), []string{PIISecret}},
		{"slack xoxb-1234567890-abcdef", []string{PIISecret}},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE", []string{PIIPrivateKey}},
		{"-----BEGIN CERTIFICATE-----", nil},
		{"secret Zq8vL2mX9pR4tY7wK1nB6cH3jF5dG0sA", []string{PIIEntropy}},
		{"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", nil},
		{"the quick brown fox jumps over the lazy dog", nil},
		{"mailbox@localhost", nil},
	}
	for _, c := range cases {
		if got := kinds(Scan(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Scan(%q) = %v; want %v", c.in, got, c.want)
		}
	}
	many := strings.Repeat("a@b.io ", 40)
	if n := len(Scan(many)); n != MaxPIIFindings {
		t.Errorf("Scan bound: %d findings", n)
	}
}

func TestSeed5_2_NoPIILeakage_ScanJSON(t *testing.T) {
	doc := []byte(`{"to":"ann@example.com","body":{"lines":["hi","card 4111111111111111"]},"n":4111111111111111,"e":"\u0061nn@example.com"}`)
	got := ScanJSON(doc)
	want := []PIIFinding{
		{Kind: PIIEmail, Where: "/to"}, {Kind: PIICard, Where: "/body/lines/1", Offset: 5},
		{Kind: PIICard, Where: "/n"}, {Kind: PIIEmail, Where: "/e"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScanJSON = %+v\nwant %+v", got, want)
	}
	if got := ScanJSON([]byte(`not json ann@example.com`)); len(got) != 1 || got[0].Kind != PIIEmail {
		t.Errorf("ScanJSON(text) = %+v", got)
	}
}

// QWED-Agent spec v1.1 §2.2 (second review): a public-looking check let
// through what only a private resolver or router answers: one-label names
// resolved through the search list ("redis", "vault"), Kubernetes service
// names, ICANN's ".internal", mDNS ".local", local-use NAT64 and Teredo.
// EgressPolicy.Strict refuses them as non-public, and AllowedHosts still
// names them (a suffix for internal names).
func TestAgentSpec_2_2_EgressStrictInternalNames(t *testing.T) {
	for _, raw := range []string{
		"http://redis:6379/", "http://vault/", "http://kubernetes.default.svc/",
		"http://vault.default.svc.cluster.local:8200/", "http://db.internal/", "http://printer.local./",
		"http://router.home.arpa/", "http://nas.lan/", "http://[64:ff9b:1::a9fe:a9fe]/",
		"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[::ffff:0:7f00:1]/", "http://[2001:db8::1]/",
	} {
		if f := CheckURL(EgressPolicy{Strict: true}, raw); f == nil || f.Rule != "non_public_address" {
			t.Errorf("%s: %+v; want non_public_address", raw, f)
		}
		if f := CheckURL(EgressPolicy{}, raw); f != nil {
			t.Errorf("%s without Strict: %+v; want it allowed, as logs written before it decided", raw, f)
		}
	}
	for _, c := range []struct {
		allowed []string
		raw     string
	}{
		{nil, "https://api.example.com/"}, {nil, "https://[2606:4700::1111]/"},
		{[]string{"*.svc.cluster.local"}, "http://vault.default.svc.cluster.local/"},
		{[]string{"redis"}, "http://redis:6379/"},
	} {
		if f := CheckURL(EgressPolicy{Strict: true, AllowedHosts: c.allowed}, c.raw); f != nil {
			t.Errorf("%s allowing %v: %+v; want allowed", c.raw, c.allowed, f)
		}
	}
}

// QWED-Agent spec v1.1 §5.2 no_pii_leakage and QWED protocol v1.0 §8
// QWED-SEC-003 (second review): what Scan missed and what it refused
// that is not PII. ScanStrict finds a card written with dots, in
// fullwidth or Arabic-Indic digits, with no-break spaces or split by a
// zero-width space; a lower-case IBAN; a credential after "key=" in a
// token long enough to be taken for an opaque one; a PGP private key.
// It no longer reads IMEIs, other numeric ids without a card scheme's
// prefix and length, or a valid checksum under a country code that has
// no IBAN, as PII. Scan is unchanged (logs written before it).
func TestAgentSpec5_2_PIIStrict(t *testing.T) {
	kinds := func(fs []PIIFinding) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Kind)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		text, strict, old string
	}{
		{"card 4111.1111.1111.1111", "card_number", ""},
		{"card ４１１１ １１１１ １１１１ １１１１", "card_number", ""},
		{"card ٤١١١١١١١١١١١١١١١", "card_number", ""},
		{"card 4111\u00a01111\u00a01111\u00a01111", "card_number", ""},
		{"card 4111111111111111\u200b", "card_number", "card_number"},
		{"card 41111111\u200b11111111", "card_number", ""},
		{"iban gb82 west 1234 5698 7654 32", "iban", ""},
		{"https://maps.example.com/api?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", "secret", "high_entropy_string"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----", "private_key", ""},
		{"imei 490154203237518", "", "card_number"},
		{"id 2718281828459045235", "", ""},
		{"ref QQ84123456789012345678", "", "iban"},
		{"account GB82WEST12345698765432", "iban", "iban"},
		{"order 4111 1111 1111 1111", "card_number", "card_number"},
		{"amex 3782 822463 10005", "card_number", "card_number"},
		{"sha 4b825dc642cb6eb9a060e54bf8d69288fbee4904 uuid 123e4567-e89b-12d3-a456-426614174000", "", ""},
		{"ts 1732623600000 ns 1732623600000000000", "", ""},
	} {
		if got := kinds(ScanStrict(c.text)); got != c.strict {
			t.Errorf("ScanStrict(%q) = %s; want %s", c.text, got, c.strict)
		}
		if got := kinds(Scan(c.text)); got != c.old {
			t.Errorf("Scan(%q) = %s; want %s as before", c.text, got, c.old)
		}
	}
	if got := kinds(ScanJSONStrict([]byte(`{"a":{"b":"\u0034111 1111 1111 1111"},"k":"token=ghp_` + strings.Repeat("Ab1", 12) + `"}`))); got != "card_number,secret" {
		t.Errorf("ScanJSONStrict: %s", got)
	}
}

// QWED-Agent spec v1.1 §2.2 (second review): a decomposed (NFD) name, as
// macOS's HFS+ writes "Café", was refused as "changed by Unicode
// normalisation": an ordinary path an agent on a Mac sends. FilePolicy.NFC
// reads it as its NFC form; compatibility look-alikes are still refused,
// and a canonical singleton cannot hide a denied name.
func TestAgentSpec_2_2_PathNFC(t *testing.T) {
	strict := FilePolicy{FoldCase: true, NFC: true}
	if f := CheckFile(strict, FileRead, "/Users/ann/Cafe\u0301.txt"); f != nil {
		t.Errorf("NFD name: %+v; want allowed", f)
	}
	if f := CheckFile(FilePolicy{}, FileRead, "/Users/ann/Cafe\u0301.txt"); f == nil || f.Rule != "unnormalisable" {
		t.Errorf("NFD name without NFC: %+v; want unnormalisable as before", f)
	}
	if f := CheckFile(strict, FileRead, "/home/ann/.\u212Aube/config"); f == nil || f.Rule != "sensitive_path" {
		t.Errorf("KELVIN SIGN: %+v; want sensitive_path", f)
	}
	if f := CheckFile(strict, FileRead, "/etc\uff0fshadow"); f == nil || f.Rule != "unnormalisable" {
		t.Errorf("fullwidth solidus: %+v; want unnormalisable", f)
	}
}

// QWED-Agent spec v1.1 §2.2, a principal's lists beside the agent's:
// allowed roots, hosts, schemes and ports intersect (each non-empty list
// must admit), a private host passes only when every non-empty hosts
// list names it exactly.
func TestAgentSpec_2_2_PrincipalPolicy_Guard(t *testing.T) {
	fp := FilePolicy{PrincipalRoots: []string{"/srv"}, AllowedRoots: []string{"/srv/a", "/home"}}
	for p, want := range map[string]string{"/srv/a/x": "", "/srv/b/x": "outside_allowed_roots", "/home/x": "outside_allowed_roots"} {
		f := CheckFile(fp, FileRead, p)
		if got := ""; f != nil && f.Rule != want || f == nil && want != got {
			t.Errorf("CheckFile(%+v, %q) = %+v; want %q", fp, p, f, want)
		}
	}
	if f := CheckFile(FilePolicy{PrincipalRoots: []string{"/srv"}}, FileRead, "/tmp/x"); f == nil || !strings.Contains(f.Reason, "principal's") {
		t.Errorf("principal roots alone: %+v", f)
	}
	cases := []struct {
		p    EgressPolicy
		url  string
		rule string
	}{
		{EgressPolicy{PrincipalSchemes: []string{"ftp"}}, "ftp://files.example/x", ""},
		{EgressPolicy{PrincipalSchemes: []string{"ftp"}}, "https://files.example/x", "scheme_not_allowed"},
		{EgressPolicy{PrincipalSchemes: []string{"https"}, AllowedSchemes: []string{"ftp", "https"}}, "ftp://files.example/x", "scheme_not_allowed"},
		{EgressPolicy{PrincipalPorts: []int{443}, AllowedPorts: []int{443, 8443}}, "https://a.example:8443/", "port_not_allowed"},
		{EgressPolicy{PrincipalHosts: []string{"*.example.com"}}, "https://api.example.com/", ""},
		{EgressPolicy{PrincipalHosts: []string{"*.example.com"}, AllowedHosts: []string{"evil.example"}}, "https://evil.example/", "host_not_allowed"},
		{EgressPolicy{PrincipalHosts: []string{"10.0.0.5"}}, "https://10.0.0.5/", ""},
		{EgressPolicy{PrincipalHosts: []string{"*.example.com"}, AllowedHosts: []string{"10.0.0.5"}}, "https://10.0.0.5/", "non_public_address"},
		{EgressPolicy{PrincipalHosts: []string{"api.example.com"}, AllowedHosts: []string{"localhost"}}, "http://localhost/", "non_public_address"},
		{EgressPolicy{PrincipalHosts: []string{"localhost"}, AllowedHosts: []string{"localhost"}}, "http://localhost/", ""},
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
}
